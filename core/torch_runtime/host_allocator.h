// PyTorch's pinned host allocator for openreg: pin_memory(), pin_memory=True
// and torch.accelerator.empty_host_cache() reach the pinned caching pool
// (core/runtime/memory/pinned_memory_pool.h) through it.
//
// Thread-safety: all methods may be called from any thread; the pool does
// its own locking.
#ifndef OPENREG_CORE_TORCH_RUNTIME_HOST_ALLOCATOR_H_
#define OPENREG_CORE_TORCH_RUNTIME_HOST_ALLOCATOR_H_

#include <ATen/core/CachingHostAllocator.h>

namespace openreg {

class HostAllocator final : public at::HostAllocator {
 public:
  c10::DataPtr allocate(size_t size) override;
  c10::DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  // `ctx` (the block) is not reused before the work enqueued on `stream` so
  // far has run. False for memory that is not from this allocator.
  bool record_event(void* ptr, void* ctx, c10::Stream stream) override;
  void empty_cache() override;
  at::HostStats get_stats() override;
  void reset_accumulated_stats() override;
  void reset_peak_stats() override;
};

HostAllocator& GetHostAllocator();

// Whether `ptr` lies in pinned memory from this driver (views and slices of
// pinned storage included).
bool IsPinnedHostPointer(const void* ptr);

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_HOST_ALLOCATOR_H_
