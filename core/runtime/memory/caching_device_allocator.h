// Note [Device caching allocator]
//
// All device memory of openreg tensors comes from here: one DeviceMemoryPool
// per device (device_memory_pool.h explains caching, splitting and streams)
// and a map from every pointer handed out to its block, because PyTorch
// frees memory by pointer alone. docs/memory.md describes the design, its
// thresholds and its statistics.
//
// Thread-safety: all methods may be called from any thread. The pointer map
// has its own mutex, taken before (never while holding) a pool's.
#ifndef OPENREG_CORE_RUNTIME_MEMORY_CACHING_DEVICE_ALLOCATOR_H_
#define OPENREG_CORE_RUNTIME_MEMORY_CACHING_DEVICE_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/driver/driver.h"
#include "core/runtime/memory/allocator_config.h"
#include "core/runtime/memory/block.h"
#include "core/runtime/memory/device_memory_pool.h"

namespace openreg {

class CachingDeviceAllocator {
 public:
  // `driver` must outlive the allocator.
  CachingDeviceAllocator(const Driver& driver, int32_t device_count,
                         const AllocatorConfig& config);

  // `size` bytes on `device` (which the caller has validated); see
  // DeviceMemoryPool::Allocate for `reclaim` and the out-of-memory error.
  absl::StatusOr<void*> Allocate(int32_t device, size_t size,
                                 absl::FunctionRef<void()> reclaim);

  // Frees memory from Allocate. False when `ptr` is not allocated memory of
  // this allocator (never handed out, or freed already).
  bool Free(void* ptr);

  // Tensor.record_stream: `ptr` must not be reused until the work queued on
  // `stream` by the time it is freed has run.
  absl::Status RecordStream(void* ptr, openreg_stream stream);

  // The device that `ptr` (the start of an allocation) lives on, if it is
  // allocated memory of this allocator.
  absl::StatusOr<int32_t> DeviceOf(void* ptr) const;

  DeviceMemoryPool& pool(int32_t device) { return *pools_[device]; }
  int32_t device_count() const { return static_cast<int32_t>(pools_.size()); }

 private:
  absl::StatusOr<Block*> FindBlock(void* ptr) const;

  std::vector<std::unique_ptr<DeviceMemoryPool>> pools_;
  mutable absl::Mutex mutex_;
  absl::flat_hash_map<void*, Block*> allocated_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_CACHING_DEVICE_ALLOCATOR_H_
