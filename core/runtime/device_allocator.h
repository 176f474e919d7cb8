// The allocator behind every openreg tensor's storage.
//
// Each allocation is a driver allocation on the calling thread's current
// device, released when PyTorch drops the storage. This is the seam where the
// caching allocator goes: it will replace this class behind the same
// registration.
//
// Thread-safety: stateless; the driver is thread-safe.
#ifndef OPENREG_CORE_RUNTIME_DEVICE_ALLOCATOR_H_
#define OPENREG_CORE_RUNTIME_DEVICE_ALLOCATOR_H_

#include <c10/core/Allocator.h>

namespace openreg {

class DeviceAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t size) override;
  c10::DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;
};

// The registered instance.
DeviceAllocator& GetDeviceAllocator();

// `size` bytes of device memory on `device`, freed by the DataPtr. Throws
// torch.OutOfMemoryError with an actionable message past the capacity.
c10::DataPtr AllocateDeviceMemory(c10::DeviceIndex device, size_t size);

// Frees memory from AllocateDeviceMemory; never throws (a deleter).
void FreeDeviceMemory(void* ptr);

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_DEVICE_ALLOCATOR_H_
