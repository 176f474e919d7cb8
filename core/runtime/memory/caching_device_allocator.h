// Note [Device caching allocator]
//
// All device memory of openreg tensors comes from here: one DeviceMemoryPool
// per device (device_memory_pool.h explains caching, splitting and streams),
// and the private pools of graphs. PyTorch frees memory by pointer alone;
// each pool maps the pointers it handed out to their blocks, so a free asks
// the device pools, then the private ones, and takes one pool's lock, not a
// lock of its own as well. docs/memory.md describes the design, its
// thresholds and its statistics.
//
// Thread-safety: all methods may be called from any thread. The private pool
// table has its own mutex, taken before (never while holding) a pool's.
#ifndef OPENREG_CORE_RUNTIME_MEMORY_CACHING_DEVICE_ALLOCATOR_H_
#define OPENREG_CORE_RUNTIME_MEMORY_CACHING_DEVICE_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/driver/driver.h"
#include "core/runtime/memory/allocator_config.h"
#include "core/runtime/memory/block.h"
#include "core/runtime/memory/device_memory_pool.h"
#include "core/runtime/memory/memory_history.h"
#include "core/runtime/memory/memory_snapshot.h"

namespace openreg {

class CachingDeviceAllocator {
 public:
  // `driver` must outlive the allocator.
  CachingDeviceAllocator(const Driver& driver, int32_t device_count,
                         const AllocatorConfig& config);

  // A block of `size` bytes on `device` (which the caller has validated);
  // see DeviceMemoryPool::Allocate for `reclaim`, `stream`, `inside_work`
  // and the out-of-memory error.
  absl::StatusOr<Block*> Allocate(int32_t device, size_t size,
                                  absl::FunctionRef<void()> reclaim,
                                  openreg_stream stream = nullptr,
                                  const StreamPoint& inside_work = {});
  // The same from the private pool `pool` of `device`, which must be in use
  // (UsePrivatePool). Graphs own what they use, so there is no stream.
  absl::StatusOr<Block*> AllocateFromPrivatePool(
      int32_t device, const PrivatePoolId& pool, size_t size,
      absl::FunctionRef<void()> reclaim);

  // Private pools: memory a graph captures with is kept apart from the
  // device's pool and stays reserved (never returned by EmptyCache or the
  // out-of-memory path) while any user holds the pool. Each user calls
  // UsePrivatePool once and ReleasePrivatePool once; after the last release
  // the pool's cached memory goes back to the driver, and so does memory
  // still allocated from it (tensors that outlive the graph) when it is
  // freed.
  void UsePrivatePool(int32_t device, const PrivatePoolId& pool);
  absl::Status ReleasePrivatePool(int32_t device, const PrivatePoolId& pool);
  // Bytes the private pool holds from the driver; 0 for an unknown pool.
  size_t PrivatePoolReservedBytes(int32_t device,
                                  const PrivatePoolId& pool) const;

  // Frees the memory at `ptr` from Allocate, looking its block up. False
  // when `ptr` is not allocated memory of this allocator (never handed out,
  // or freed already). Named apart from Free(Block*): a Block* kept in a
  // void* would otherwise free by the wrong address without a word.
  [[nodiscard]] bool FreeAt(void* ptr);
  // Frees a block from Allocate, without looking it up.
  void Free(Block* block);

  // Tensor.record_stream: `ptr` must not be reused until the work queued on
  // `stream` by the time it is freed has run.
  absl::Status RecordStream(void* ptr, openreg_stream stream);

  // The device that `ptr` (the start of an allocation) lives on, if it is
  // allocated memory of this allocator.
  absl::StatusOr<int32_t> DeviceOf(void* ptr) const;

  // Memory history (Note [Memory history]) of every device: starts or
  // changes recording, or stops it and drops what was recorded.
  void EnableHistory(const HistorySettings& settings,
                     const MemoryHistory::Gatherer& gatherer);
  void DisableHistory();
  // Every segment of every pool, private ones included, and each device's
  // trace.
  MemorySnapshot Snapshot() const;

  DeviceMemoryPool& pool(int32_t device) { return *pools_[device]; }
  int32_t device_count() const { return static_cast<int32_t>(pools_.size()); }

 private:
  struct PrivatePool {
    std::unique_ptr<DeviceMemoryPool> pool;
    int users = 0;
  };

  absl::StatusOr<Block*> FindBlock(void* ptr) const;
  // After a free into the private pool `pool`: returns its memory at once
  // if the pool has no users left.
  void ReturnIfRetired(DeviceMemoryPool* pool);
  // Every private pool so far (none is ever destroyed).
  std::vector<DeviceMemoryPool*> PrivatePools() const;

  const Driver& driver_;
  const AllocatorConfig config_;
  // One per device, shared by its pools; before pools_, which use them.
  std::vector<std::unique_ptr<MemoryHistory>> histories_;
  std::vector<std::unique_ptr<DeviceMemoryPool>> pools_;
  mutable absl::Mutex mutex_;
  // Kept after their last user (small; memory may still be allocated from
  // them), by device and id.
  absl::flat_hash_map<std::pair<int32_t, PrivatePoolId>, PrivatePool>
      private_pools_ ABSL_GUARDED_BY(mutex_);
  // Private pools without users: frees into them return memory at once.
  absl::flat_hash_set<const DeviceMemoryPool*> retired_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_CACHING_DEVICE_ALLOCATOR_H_
