// Pinned host memory, from the driver's host_malloc. Tensors created with
// pin_memory=True live here, and asynchronous copies may use them.
//
// Thread-safety: stateless; the driver is thread-safe.
#ifndef OPENREG_CORE_RUNTIME_HOST_ALLOCATOR_H_
#define OPENREG_CORE_RUNTIME_HOST_ALLOCATOR_H_

#include <c10/core/Allocator.h>

namespace openreg {

class HostAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t size) override;
  c10::DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;
};

HostAllocator& GetHostAllocator();

// Whether `ptr` lies in pinned memory from this driver.
bool IsPinnedHostPointer(const void* ptr);

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_HOST_ALLOCATOR_H_
