"""Memory of openreg devices, mirroring torch.cuda's memory API.

The numbers come from openreg's caching allocators (docs/memory.md) and are
the ones torch.accelerator's memory functions report for openreg. Statistics
of a device that has not been used are zero.
"""

import collections
import pickle
import sys
from typing import Any, Optional

import torch

from torch_openreg import _C

# The underscored snapshot functions (_record_memory_history, _snapshot,
# _dump_snapshot) are not in __all__, as in torch.cuda.memory.
__all__ = [
    "caching_allocator_alloc",
    "caching_allocator_delete",
    "empty_cache",
    "empty_host_cache",
    "host_memory_stats",
    "host_memory_stats_as_nested_dict",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "memory_stats_as_nested_dict",
    "memory_summary",
    "reset_accumulated_host_memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_host_memory_stats",
    "reset_peak_memory_stats",
]


def _index(device: Any) -> int:
    from torch_openreg.openreg import _device_index

    return _device_index(device)


def caching_allocator_alloc(size: int, device: Any = None, stream: Optional[torch.Stream] = None) -> int:
    """`size` bytes of device memory from the caching allocator, as an address (an int), as
    torch.cuda.caching_allocator_alloc gives.

    The memory is on `device` (the stream's device, or the current device, when None) and is
    stream-ordered on `stream` (the device's current stream when None): once freed, work on that
    stream may reuse it at once. Free it with caching_allocator_delete; the memory statistics count it
    until then. C++ code gets the same memory from c10::GetAllocator(c10::DeviceType::PrivateUse1)
    ->raw_allocate(size) (docs/memory.md, "Device memory by address").
    """
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError(f"caching_allocator_alloc: size must be an int (bytes), got {size!r}")
    if stream is None:
        stream = torch.openreg.current_stream(device)
    elif not isinstance(stream, torch.Stream):
        raise TypeError(f"caching_allocator_alloc: stream must be a torch.Stream of openreg, got {stream!r}")
    elif stream.device.type != "openreg":
        raise ValueError(f"caching_allocator_alloc: expected an openreg stream, got one of {stream.device}; "
                         "pass torch.openreg.current_stream(device)")
    elif device is not None and _index(device) != stream.device_index:
        raise ValueError(f"caching_allocator_alloc: the stream is on {stream.device}, not on device {device!r}; "
                         "pass one of them, or a stream of that device")
    return _C._caching_allocator_alloc(size, stream.stream_id, stream.device_index)


def caching_allocator_delete(mem_ptr: int) -> None:
    """Frees memory caching_allocator_alloc returned, as torch.cuda.caching_allocator_delete does.

    Raises RuntimeError, freeing nothing, for any other address or one freed already: a tensor's memory is
    freed with the tensor, never through its address.
    """
    if not isinstance(mem_ptr, int) or isinstance(mem_ptr, bool) or mem_ptr < 0:
        raise TypeError(f"caching_allocator_delete: mem_ptr must be an address (a non-negative int), got {mem_ptr!r}")
    _C._caching_allocator_delete(mem_ptr)


def empty_cache() -> None:
    """Returns every unused cached block of every device to the driver."""
    torch.accelerator.empty_cache()


def memory_stats(device: Any = None) -> "collections.OrderedDict[str, Any]":
    """The caching allocator's statistics for `device`, under the keys of
    torch.cuda.memory_stats (e.g. "allocated_bytes.all.current")."""
    return torch.accelerator.memory_stats(_index(device))


def _nested(flat: "dict[str, Any]") -> "dict[str, Any]":
    nested: "dict[str, Any]" = {}
    for key, value in flat.items():
        *parents, leaf = key.split(".")
        node = nested
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return nested


def memory_stats_as_nested_dict(device: Any = None) -> "dict[str, Any]":
    """memory_stats(device) with its dotted keys as nested dictionaries."""
    return _nested(memory_stats(device))


def memory_allocated(device: Any = None) -> int:
    """Bytes of device memory held by tensors (rounded block sizes)."""
    return torch.accelerator.memory_allocated(_index(device))


def max_memory_allocated(device: Any = None) -> int:
    """Peak of memory_allocated since the start or the last peak reset."""
    return torch.accelerator.max_memory_allocated(_index(device))


def memory_reserved(device: Any = None) -> int:
    """Bytes of device memory held by the caching allocator, cached or not."""
    return torch.accelerator.memory_reserved(_index(device))


def max_memory_reserved(device: Any = None) -> int:
    """Peak of memory_reserved since the start or the last peak reset."""
    return torch.accelerator.max_memory_reserved(_index(device))


def reset_peak_memory_stats(device: Any = None) -> None:
    torch.accelerator.reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device: Any = None) -> None:
    torch.accelerator.reset_accumulated_memory_stats(_index(device))


def mem_get_info(device: Any = None) -> "tuple[int, int]":
    """(free, total) bytes of the device as the driver reports them; memory the
    caching allocator holds counts as used."""
    return torch.accelerator.get_memory_info(_index(device))


def host_memory_stats() -> "dict[str, Any]":
    """The pinned host allocator's statistics ("allocated_bytes.current", ...)."""
    return _C._host_memory_stats()


def host_memory_stats_as_nested_dict() -> "dict[str, Any]":
    """host_memory_stats() with its dotted keys as nested dictionaries."""
    return _nested(host_memory_stats())


def empty_host_cache() -> None:
    """Returns every unused cached pinned block to the driver."""
    torch.accelerator.empty_host_cache()


def reset_peak_host_memory_stats() -> None:
    _C._reset_peak_host_memory_stats()


def reset_accumulated_host_memory_stats() -> None:
    _C._reset_accumulated_host_memory_stats()


def _format_size(count: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(count) < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.2f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


_SUMMARY_ROWS = [
    ("allocated_bytes", "Allocated memory", _format_size),
    ("active_bytes", "Active memory", _format_size),
    ("requested_bytes", "Requested memory", _format_size),
    ("reserved_bytes", "Reserved memory", _format_size),
    ("inactive_split_bytes", "Non-releasable memory", _format_size),
    ("allocation", "Allocations", str),
    ("active", "Active allocs", str),
    ("segment", "Reserved segments", str),
    ("inactive_split", "Non-releasable allocs", str),
]


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """A table of the caching allocator's statistics for `device`: current
    and peak values and the totals allocated and freed, per pool unless
    `abbreviated`."""
    index = _index(device)
    stats = memory_stats(index)
    columns = ("current", "peak", "allocated", "freed")
    header = f"{'openreg:' + str(index):<34}" + "".join(f"{c:>14}" for c in columns)
    rule = "-" * len(header)
    lines = [rule, header, rule]
    pools = ("all",) if abbreviated else ("all", "large_pool", "small_pool")
    for key, title, fmt in _SUMMARY_ROWS:
        for pool in pools:
            label = title if pool == "all" else f"  from {pool.replace('_', ' ')}"
            values = (stats.get(f"{key}.{pool}.{column}", 0) for column in columns)
            lines.append(f"{label:<34}" + "".join(f"{fmt(v):>14}" for v in values))
        lines.append(rule)
    for key in ("num_device_alloc", "num_device_free", "num_alloc_retries",
                "num_ooms", "num_sync_all_streams"):
        lines.append(f"{key:<34}{stats.get(key, 0):>14}")
    split = stats.get("max_split_size", -1)
    lines.append(f"{'max_split_size':<34}{'unlimited' if split < 0 else _format_size(split):>14}")
    lines.append(rule)
    return "\n".join(lines)


# Memory history and snapshots (docs/memory_snapshots.md), with
# torch.cuda.memory's arguments and format, so that torch.cuda._memory_viz and
# https://pytorch.org/memory_viz read them.

_ENABLED = (None, "state", "all")
_CONTEXTS = {None: 0, "state": 1, "alloc": 2, "all": 3}
_STACKS = ("python", "all")
_ACTIONS = ("alloc", "free_requested", "free_completed", "segment_alloc",
            "segment_free", "oom", "snapshot")


def _check_choice(name: str, value: Any, choices: Any) -> None:
    if value not in choices or isinstance(value, bool):
        shown = ", ".join(repr(c) for c in choices)
        raise ValueError(
            f"_record_memory_history: {name} must be one of {shown}, got "
            f"{value!r}; e.g. _record_memory_history({name}={list(choices)[-1]!r})")


def _record_memory_history(
    enabled: Optional[str] = "all",
    context: Optional[str] = "all",
    stacks: str = "all",
    max_entries: int = sys.maxsize,
    device: Any = None,
    clear_history: bool = False,
    compile_context: bool = False,
    global_record_annotations: bool = False,
    skip_actions: "Optional[list[str]]" = None,
) -> None:
    """Records what the caching allocator does, for _snapshot().

    As torch.cuda.memory._record_memory_history, on every openreg device:
    `enabled` None stops recording (and drops the history), "state" keeps the
    stack of each live allocation, "all" also keeps the last `max_entries`
    actions (alloc, free_requested, free_completed, segment_alloc,
    segment_free, oom, snapshot) in a ring buffer. `context` says which carry a
    stack: None, "state" (live allocations), "alloc" (and alloc entries) or
    "all" (frees too). `stacks` "python" records Python frames, "all" C++
    frames too. `skip_actions` lists actions not to record; `clear_history`
    drops what was recorded before. `device` is accepted for torch.cuda's
    signature; recording applies to every device, as there.
    """
    del device  # every device, as on CUDA
    _check_choice("enabled", enabled, _ENABLED)
    _check_choice("context", context, tuple(_CONTEXTS))
    _check_choice("stacks", stacks, _STACKS)
    if not isinstance(max_entries, int) or isinstance(max_entries, bool) or max_entries < 1:
        raise ValueError(
            "_record_memory_history: max_entries must be a positive int (the "
            f"number of trace entries kept), got {max_entries!r}; e.g. "
            "max_entries=100000")
    skip = list(skip_actions or [])
    for action in skip:
        if action not in _ACTIONS:
            raise ValueError(
                f"_record_memory_history: skip_actions names unknown action "
                f"{action!r}; the actions are {', '.join(_ACTIONS)}")
    for name, value in (("compile_context", compile_context),
                        ("global_record_annotations", global_record_annotations)):
        if value:
            raise NotImplementedError(
                f"_record_memory_history: {name}=True is not supported on "
                f"openreg (it records torch.compile and profiler annotations "
                f"only CUDA's allocator knows); pass {name}=False")
    if clear_history or enabled is None:
        _C._record_memory_history(False, False, 0, False, False, 1, [])
    if enabled is not None:
        _C._record_memory_history(
            True, enabled == "all", _CONTEXTS[context], True, stacks == "all",
            min(max_entries, 2**64 - 1), skip)


def _snapshot(device: Any = None) -> "dict[str, Any]":
    """The caching allocator's state as torch.cuda.memory._snapshot gives it:
    "segments" (every driver allocation of every device and private pool,
    with its blocks), "device_traces" (per device, the actions recorded since
    _record_memory_history) and "allocator_settings". `device` is accepted
    for torch.cuda's signature; the snapshot covers every device, as there."""
    del device
    return _C._memory_snapshot()


def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
    """Pickles _snapshot() to `filename`, the file https://pytorch.org/memory_viz
    and torch.cuda._memory_viz open."""
    snapshot = _snapshot()
    with open(filename, "wb") as f:
        pickle.dump(snapshot, f)
