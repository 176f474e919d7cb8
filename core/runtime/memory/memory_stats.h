// Statistics of the caching allocators, kept under the same names and with
// the same meaning as torch.cuda.memory_stats() (docs/memory.md,
// "Statistics"). Plain data: the allocator updates them under its mutex and
// hands out copies.
#ifndef OPENREG_CORE_RUNTIME_MEMORY_MEMORY_STATS_H_
#define OPENREG_CORE_RUNTIME_MEMORY_MEMORY_STATS_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace openreg {

// One quantity: its current value, the peak since the last peak reset, and
// the totals added and removed since the last accumulated reset.
struct MemoryStat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;

  void Increase(int64_t amount) {
    current += amount;
    allocated += amount;
    peak = std::max(peak, current);
  }
  void Decrease(int64_t amount) {
    current -= amount;
    freed += amount;
  }
  // Increase or Decrease by `delta`'s sign.
  void Change(int64_t delta) {
    if (delta >= 0) {
      Increase(delta);
    } else {
      Decrease(-delta);
    }
  }
  void ResetPeak() { peak = current; }
  void ResetAccumulated() { allocated = freed = 0; }
};

// Index into a PoolStats: the sum over both pools, and each pool.
enum class StatPool : int { kAll = 0, kSmall = 1, kLarge = 2 };
inline constexpr int kStatPoolCount = 3;

struct PoolStats {
  std::array<MemoryStat, kStatPoolCount> by_pool;

  const MemoryStat& operator[](StatPool pool) const {
    return by_pool[static_cast<int>(pool)];
  }
  // Changes the aggregate and the pool a block belongs to.
  void Increase(bool small, int64_t amount) {
    by_pool[static_cast<int>(StatPool::kAll)].Increase(amount);
    by_pool[static_cast<int>(small ? StatPool::kSmall : StatPool::kLarge)]
        .Increase(amount);
  }
  void Decrease(bool small, int64_t amount) {
    by_pool[static_cast<int>(StatPool::kAll)].Decrease(amount);
    by_pool[static_cast<int>(small ? StatPool::kSmall : StatPool::kLarge)]
        .Decrease(amount);
  }
  void Change(bool small, int64_t delta) {
    by_pool[static_cast<int>(StatPool::kAll)].Change(delta);
    by_pool[static_cast<int>(small ? StatPool::kSmall : StatPool::kLarge)]
        .Change(delta);
  }
  void ResetPeak() {
    for (MemoryStat& stat : by_pool) stat.ResetPeak();
  }
  void ResetAccumulated() {
    for (MemoryStat& stat : by_pool) stat.ResetAccumulated();
  }
};

struct DeviceMemoryStats {
  PoolStats allocation;            // count of blocks handed out
  PoolStats segment;               // count of driver allocations held
  PoolStats active;                // count of blocks allocated or awaiting events
  PoolStats inactive_split;        // count of free blocks in split segments
  PoolStats allocated_bytes;       // bytes of blocks handed out (rounded)
  PoolStats reserved_bytes;        // bytes of driver allocations held
  PoolStats active_bytes;          // bytes of active blocks
  PoolStats inactive_split_bytes;  // bytes of free blocks in split segments
  PoolStats requested_bytes;       // bytes asked for (not rounded)
  MemoryStat oversize_allocations; // blocks of max_split_size or more in use
  MemoryStat oversize_segments;    // segments of max_split_size or more held

  int64_t num_alloc_retries = 0;   // allocations that released the cache to succeed
  int64_t num_ooms = 0;            // out-of-memory errors raised
  int64_t num_sync_all_streams = 0;  // waits for all pending work to reclaim memory
  int64_t num_device_alloc = 0;    // driver allocations made
  int64_t num_device_free = 0;     // driver allocations returned
  int64_t max_split_size = -1;     // the configured limit; -1: none

  void ResetPeak() {
    for (PoolStats* stats : AllPoolStats()) stats->ResetPeak();
    oversize_allocations.ResetPeak();
    oversize_segments.ResetPeak();
  }
  void ResetAccumulated() {
    for (PoolStats* stats : AllPoolStats()) stats->ResetAccumulated();
    oversize_allocations.ResetAccumulated();
    oversize_segments.ResetAccumulated();
    num_alloc_retries = num_ooms = num_sync_all_streams = 0;
    num_device_alloc = num_device_free = 0;
  }

 private:
  std::array<PoolStats*, 9> AllPoolStats() {
    return {&allocation,      &segment,        &active,
            &inactive_split,  &allocated_bytes, &reserved_bytes,
            &active_bytes,    &inactive_split_bytes, &requested_bytes};
  }
};

// The pinned host allocator's statistics (torch 2.13's HostStats subset that
// has a meaning here).
struct HostMemoryStats {
  MemoryStat active_requests;  // blocks handed out
  MemoryStat active_bytes;     // bytes of blocks handed out
  MemoryStat allocations;      // blocks held, in use or cached
  MemoryStat allocated_bytes;  // bytes of blocks held
  int64_t num_host_alloc = 0;  // driver pinned allocations made
  int64_t num_host_free = 0;   // driver pinned allocations returned

  void ResetPeak() {
    for (MemoryStat* stat : All()) stat->ResetPeak();
  }
  void ResetAccumulated() {
    for (MemoryStat* stat : All()) stat->ResetAccumulated();
    num_host_alloc = num_host_free = 0;
  }

 private:
  std::array<MemoryStat*, 4> All() {
    return {&active_requests, &active_bytes, &allocations, &allocated_bytes};
  }
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_MEMORY_STATS_H_
