"""Dynamo's device interface for openreg: what Dynamo and Inductor call to
trace and compile device-generic code (streams, events, current device, ...).

Everything forwards to torch.openreg, the module that mirrors torch.cuda.
"""

import dataclasses
from typing import Any

import torch
from torch._dynamo.device_interface import DeviceInterface

import torch_openreg.openreg as openreg
from torch_openreg import _C


@dataclasses.dataclass(frozen=True)
class CompileDeviceProperties:
    """What Inductor reads of a device's properties when it plans kernels.

    Generated kernels run on the host's cores (OpenMP inside the kernel, on
    the driver's thread), so `multi_processor_count` is the number of
    threads ATen's CPU kernels use, as it is for Inductor's CPU device; there
    are no warps.
    """

    name: str
    total_memory: int
    multi_processor_count: int
    warp_size: Any = None


class OpenRegInterface(DeviceInterface):
    device = openreg.device
    Event = openreg.Event
    Stream = openreg.Stream

    class Worker:
        # Inductor's compile workers query properties by these; openreg needs
        # no fork-safe snapshot because its properties come from the driver
        # the calling process already loaded.
        @staticmethod
        def set_device(device: int) -> None:
            openreg.set_device(device)

        @staticmethod
        def current_device() -> int:
            return openreg.current_device()

        @staticmethod
        def get_device_properties(device: torch.types.Device = None) -> Any:
            driver_properties = openreg.get_device_properties(device)
            return CompileDeviceProperties(
                name=driver_properties.name,
                total_memory=driver_properties.total_memory,
                multi_processor_count=torch.get_num_threads(),
            )

    current_device = staticmethod(openreg.current_device)
    set_device = staticmethod(openreg.set_device)
    device_count = staticmethod(openreg.device_count)
    is_available = staticmethod(openreg.is_available)
    stream = staticmethod(openreg.stream)
    current_stream = staticmethod(openreg.current_stream)
    set_stream = staticmethod(openreg.set_stream)
    synchronize = staticmethod(openreg.synchronize)
    memory_allocated = staticmethod(openreg.memory_allocated)
    is_bf16_supported = staticmethod(openreg.is_bf16_supported)
    get_compute_capability = staticmethod(openreg.get_device_capability)

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        return _C._exchange_device(device)

    @staticmethod
    def exchange_device(device: int) -> int:
        return _C._exchange_device(device)

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
        _C._set_stream(stream_id, device_index)

    @staticmethod
    def get_raw_stream(device_idx: int) -> int:
        """The id of the current stream of `device_idx`: openreg streams have no
        raw handle outside the core, and generated kernels reach the current
        stream through the core, not through a handle."""
        return openreg.current_stream(device_idx).stream_id
