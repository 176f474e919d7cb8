"""torch.openreg: the openreg device module, mirroring torch.cuda.

Device indices may be given as an int, a string such as "openreg:1", or a
torch.device; None means the current device.
"""

import atexit
import collections
import os
import time
from typing import Any, Union

import torch

from torch_openreg import _C
from torch_openreg.openreg.memory import (
    empty_cache,
    empty_host_cache,
    host_memory_stats,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_accumulated_host_memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_host_memory_stats,
    reset_peak_memory_stats,
)
from torch_openreg.openreg.random import (
    get_rng_state,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
)

__all__ = [
    "DriverInfo",
    "current_device",
    "device",
    "device_count",
    "driver_info",
    "empty_cache",
    "empty_host_cache",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "host_memory_stats",
    "init",
    "initial_seed",
    "is_available",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "memory_summary",
    "reset_accumulated_host_memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_host_memory_stats",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "synchronize",
]

DeviceLike = Union[int, str, torch.device, None]

DriverInfo = collections.namedtuple("DriverInfo", ["name", "version", "abi_version", "path"])
DeviceProperties = collections.namedtuple(
    "DeviceProperties",
    ["name", "total_memory", "least_stream_priority", "greatest_stream_priority", "concurrent_streams"],
)


def _device_index(device: DeviceLike) -> int:
    """The index `device` names; the current device for None or a bare 'openreg'."""
    if device is None:
        return current_device()
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "openreg":
            raise ValueError(f"expected an openreg device, got '{device}'; use e.g. 'openreg:0'")
        return current_device() if device.index is None else device.index
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    raise TypeError(f"expected a device index, an 'openreg:N' string or a torch.device, got {device!r}")


_in_bad_fork = False


def _after_fork_in_child() -> None:
    # A driver's threads and state do not survive fork(): a child of a process
    # that initialized the device must not use it.
    global _in_bad_fork
    if _C._is_initialized():
        _in_bad_fork = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def _let_autograd_device_threads_start() -> None:
    # The first backward through an openreg tensor makes PyTorch's autograd
    # engine start one worker thread per openreg device, and each new thread
    # must take the GIL once before it parks. A thread still waiting for the
    # GIL when the interpreter finalizes is ended inside C++ and aborts the
    # process ("terminate called without an active exception", the race of
    # pytorch/pytorch#38228; idle threads for devices that got no work are the
    # ones caught). Releasing the GIL for a moment at exit lets them finish
    # starting. Only processes that used openreg pay for it.
    if _C._is_initialized():
        time.sleep(0.05)


atexit.register(_let_autograd_device_threads_start)


def _is_in_bad_fork() -> bool:
    """Whether this process was forked from one that had initialized openreg."""
    return _in_bad_fork


def is_available() -> bool:
    """Whether the driver loads and has at least one device. Never raises."""
    try:
        return _C._device_count() > 0
    except (RuntimeError, ValueError):
        return False


def is_initialized() -> bool:
    """Whether the driver has been loaded."""
    return _C._is_initialized()


def init() -> None:
    """Loads and initializes the driver now instead of at first use."""
    _C._init()


def device_count() -> int:
    """Number of openreg devices. Raises if the driver cannot be loaded."""
    return _C._device_count()


def current_device() -> int:
    """The calling thread's current openreg device index."""
    _C._init()
    return _C._get_device()


def set_device(device: DeviceLike) -> None:
    """Makes `device` the calling thread's current device."""
    _C._set_device(_device_index(device))


class device:
    """Context manager that makes `device` current and restores the previous one.

    `None` or a negative index leaves the current device unchanged.
    """

    def __init__(self, device: Any):
        self.idx = -1 if device is None else _device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _C._exchange_device(self.idx)

    def __exit__(self, *exc_info: Any) -> bool:
        if self.idx >= 0:
            _C._set_device(self.prev_idx)
        return False


def synchronize(device: DeviceLike = None) -> None:
    """Waits for all work on every stream of `device`."""
    _C._synchronize(_device_index(device))


def driver_info() -> DriverInfo:
    """The loaded driver: name, version, ABI version and path."""
    return DriverInfo(**_C._driver_info())


def get_device_properties(device: DeviceLike = None) -> DeviceProperties:
    return DeviceProperties(**_C._device_properties(_device_index(device)))


def get_device_name(device: DeviceLike = None) -> str:
    return get_device_properties(device).name
