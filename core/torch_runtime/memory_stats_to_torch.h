// openreg's allocator statistics in PyTorch's own types, for
// c10::DeviceAllocator::getDeviceStats and at::HostAllocator::get_stats.
#ifndef OPENREG_CORE_TORCH_RUNTIME_MEMORY_STATS_TO_TORCH_H_
#define OPENREG_CORE_TORCH_RUNTIME_MEMORY_STATS_TO_TORCH_H_

#include <c10/core/CachingDeviceAllocator.h>

#include "core/runtime/memory/memory_stats.h"

namespace openreg {

inline void CopyStat(const MemoryStat& from, c10::CachingAllocator::Stat& to) {
  to.current = from.current;
  to.peak = from.peak;
  to.allocated = from.allocated;
  to.freed = from.freed;
}

inline void CopyPoolStats(const PoolStats& from,
                          c10::CachingDeviceAllocator::StatArray& to) {
  for (int pool = 0; pool < kStatPoolCount; ++pool) {
    CopyStat(from.by_pool[pool], to[pool]);
  }
}

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_MEMORY_STATS_TO_TORCH_H_
