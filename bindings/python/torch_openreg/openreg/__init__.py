"""torch.openreg: the openreg device module, mirroring torch.cuda.

Device indices may be given as an int, a string such as "openreg:1", or a
torch.device; None means the current device.
"""

import atexit
import collections
import time
from typing import Any, List, Tuple, Union

import torch

from torch_openreg import _C
from torch_openreg.openreg import memory
from torch_openreg.openreg.graphs import (
    Graph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
)
from torch_openreg.openreg.graphed_callables import make_graphed_callables
from torch_openreg.openreg.memory import (
    caching_allocator_alloc,
    caching_allocator_delete,
    empty_cache,
    empty_host_cache,
    host_memory_stats,
    host_memory_stats_as_nested_dict,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_host_memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_host_memory_stats,
    reset_peak_memory_stats,
)
from torch_openreg.openreg.random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from torch_openreg.openreg.streams import (
    Event,
    Stream,
    current_stream,
    default_stream,
    set_stream,
    stream,
)

__all__ = [
    "DriverInfo",
    "Event",
    "Graph",
    "Stream",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "device_of",
    "driver_info",
    "get_amp_supported_dtype",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "graph",
    "graph_pool_handle",
    "is_current_stream_capturing",
    "get_rng_state_all",
    "init",
    "initial_seed",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "is_tf32_supported",
    "make_graphed_callables",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "stream",
    "synchronize",
]
__all__ += memory.__all__

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


def _let_autograd_device_threads_start() -> None:
    # PyTorch's autograd engine starts one worker thread per openreg device at
    # the first backward pass, or, on a driver that runs work inline, at the
    # first launch (core/torch_runtime/backward_thread.h), and each new thread
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
    """Whether this process was forked from one that had initialized openreg.

    The core keeps the flag (set by a pthread_atfork handler), so the C++ lazy
    initialization refuses such a child too; any device use there raises a
    RuntimeError that says to use the 'spawn' start method.
    """
    return _C._is_in_bad_fork()


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


class device_of(device):
    """Context manager that makes the device of tensor `obj` current; a
    tensor that is not on openreg leaves the current device unchanged."""

    def __init__(self, obj: torch.Tensor):
        super().__init__(obj.get_device() if obj.device.type == "openreg" else None)


def __getattr__(name: str) -> Any:
    # torch.cuda.default_generators is a tuple of every device's default
    # generator; building it needs the driver, so it is made on first access
    # and `import torch` stays free of driver work.
    if name == "default_generators":
        return tuple(_C._default_generator(index) for index in range(device_count()))
    raise AttributeError(f"module 'torch.openreg' has no attribute '{name}'")


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


def get_device_capability(device: DeviceLike = None) -> Tuple[int, int]:
    """The (major, minor) hardware generation of `device`, as torch.cuda's.

    A simulated device has no hardware generation: every op runs ATen's CPU
    kernel, so no generation-gated feature (tensor cores, flash attention)
    exists. (0, 0) makes code that gates features on a capability take its
    portable path. Which dtypes the device supports is in
    torch.accelerator.get_device_capability(device)["supported_dtypes"].
    """
    _C._device_properties(_device_index(device))  # validates the index
    return (0, 0)


def get_amp_supported_dtype() -> List[torch.dtype]:
    """The dtypes torch.autocast("openreg", dtype=...) accepts; others warn and disable autocast."""
    return [torch.float16, torch.bfloat16]


def is_tf32_supported() -> bool:
    """Always false: float32 matmuls run ATen's CPU kernels, which have no TF32 mode."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Always true: bfloat16 ops run ATen's CPU kernels, which support it."""
    return True
