// PyTorch's device allocator for openreg: every openreg storage's memory,
// served by the caching allocator (Note [Device caching allocator]) and the
// source of torch.accelerator's and torch.openreg's memory statistics.
//
// Thread-safety: all methods may be called from any thread; the caching
// allocator does its own locking.
#ifndef OPENREG_CORE_TORCH_RUNTIME_DEVICE_ALLOCATOR_H_
#define OPENREG_CORE_TORCH_RUNTIME_DEVICE_ALLOCATOR_H_

#include <c10/core/CachingDeviceAllocator.h>

#include <utility>

namespace openreg {

class DeviceAllocator final : public c10::DeviceAllocator {
 public:
  // Memory on the calling thread's current device.
  c10::DataPtr allocate(size_t size) override;
  c10::DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  // Whether the runtime exists; statistics of a runtime that does not are
  // zero, and asking for them does not create it.
  bool initialized() override;
  // Returns the unused cached memory of every device to the driver.
  void emptyCache(c10::MempoolId_t mempool_id = {0, 0}) override;
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override;
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(
      c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;
  // (free, total) bytes of the device, as the driver reports them.
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override;
};

// The registered instance.
DeviceAllocator& GetDeviceAllocator();

// `size` bytes of device memory on `device`, freed by the DataPtr. Throws
// torch.OutOfMemoryError with an actionable message when the device is
// full even after releasing the cache and waiting for queued work.
c10::DataPtr AllocateDeviceMemory(c10::DeviceIndex device, size_t size);

// Frees memory from AllocateDeviceMemory; never throws (a deleter).
void FreeDeviceMemory(void* ptr);

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_DEVICE_ALLOCATOR_H_
