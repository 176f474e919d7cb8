"""Memory of openreg devices, mirroring torch.cuda's memory API.

The numbers come from openreg's caching allocators (docs/memory.md) and are
the ones torch.accelerator's memory functions report for openreg. Statistics
of a device that has not been used are zero.
"""

import collections
from typing import Any

import torch

from torch_openreg import _C

__all__ = [
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
