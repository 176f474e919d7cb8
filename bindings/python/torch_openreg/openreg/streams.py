"""torch.openreg.Stream and Event, and the current-stream functions, as torch.cuda's.

They are thin subclasses of the generic torch.Stream and torch.Event, which
already reach the driver through openreg's device guard; the subclasses add
torch.cuda's constructor signatures and reprs, so code written for
torch.cuda.Stream/Event ports by renaming. Current streams are per thread and
per device (see docs/design.md, "Streams").
"""

import contextlib
from typing import Iterator, Optional, Union

import torch

from torch_openreg import _C

DeviceLike = Union[int, str, torch.device, None]


def _device_index(device: DeviceLike) -> int:
    from torch_openreg.openreg import _device_index as index_of

    return index_of(device)


class Stream(torch.Stream):
    """An openreg stream: an in-order queue of work on one device.

    `Stream(device=None, priority=0)` makes a new stream on `device` (the
    current device when None); a lower priority number is a higher priority,
    as on CUDA. `Stream(stream_id=..., device_index=..., device_type=...)`
    names an existing stream, for example one rebuilt from another's fields.
    """

    def __new__(cls, device: DeviceLike = None, priority: int = 0, **kwargs):
        if kwargs:
            # The (stream_id, device_index, device_type) form of torch.Stream.
            return super().__new__(cls, priority=priority, **kwargs)
        device = torch.device("openreg", _device_index(device))
        return super().__new__(cls, device=device, priority=priority)

    @property
    def priority(self) -> int:
        """The stream's priority as the driver reports it, as torch.cuda.Stream.priority.

        Needs a driver of ABI 1.1 or later (stream_get_priority); with an older
        driver it raises NotImplementedError naming the driver and its ABI version.
        """
        return _C._stream_priority(self.stream_id, self.device_index)

    def __repr__(self) -> str:
        return f"<torch.openreg.Stream device={self.device} stream_id={self.stream_id}>"

    @classmethod
    def _from_generic(cls, stream_id: int, device_index: int, device_type: int) -> "Stream":
        return cls(stream_id=stream_id, device_index=device_index, device_type=device_type)


class Event(torch.Event):
    """An openreg event, as torch.cuda.Event.

    Before its first `record()` an event has no device (`device_index` -1) and
    `event_id` 0, and `query()` is true. `elapsed_time` needs both events made
    with `enable_timing=True`. Events cannot be shared between processes.
    """

    def __new__(
        cls,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
        device: DeviceLike = None,
    ):
        if interprocess:
            raise ValueError(
                "openreg events cannot be shared between processes (interprocess=True): "
                "a simulated device lives inside one process. Create the event with "
                "interprocess=False and synchronize across processes on the CPU side."
            )
        if device is not None:
            device = torch.device("openreg", _device_index(device))
        else:
            device = torch.device("openreg")
        return super().__new__(cls, device=device, enable_timing=enable_timing, blocking=blocking)

    def __repr__(self) -> str:
        if self.event_id == 0:
            return "<torch.openreg.Event uninitialized>"
        return f"<torch.openreg.Event device={self.device} event_id={self.event_id:#x}>"


def current_stream(device: DeviceLike = None) -> Stream:
    """The calling thread's current stream on `device` (the current device when None)."""
    return Stream._from_generic(*_C._current_stream(_device_index(device)))


def default_stream(device: DeviceLike = None) -> Stream:
    """The default stream (id 0) of `device`."""
    return Stream._from_generic(*_C._default_stream(_device_index(device)))


def set_stream(stream: Optional[torch.Stream]) -> None:
    """Makes `stream` current on its device, and that device current; None does nothing."""
    if stream is None:
        return
    if stream.device.type != "openreg":
        raise ValueError(f"expected an openreg stream, got a stream on '{stream.device}'")
    _C._set_stream(stream.stream_id, stream.device_index)


@contextlib.contextmanager
def stream(selected: Optional[torch.Stream]) -> Iterator[None]:
    """Context manager making `selected` the current stream (and its device the
    current device); both are restored on exit, also after an exception. None
    changes nothing."""
    if selected is None:
        yield
        return
    if selected.device.type != "openreg":
        raise ValueError(f"expected an openreg stream, got a stream on '{selected.device}'")
    with selected:
        yield
