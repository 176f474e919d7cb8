#include "core/runtime/device_allocator.h"

#include <c10/util/Exception.h>

#include "absl/strings/str_cat.h"
#include "core/runtime/runtime.h"
#include "core/runtime/thread_state.h"
#include "core/runtime/torch_status.h"
#include "core/runtime/torch_stream.h"

namespace openreg {

// The deleter only gets the pointer; the driver tells which device owns it.
void FreeDeviceMemory(void* ptr) {
  if (ptr == nullptr) return;
  absl::StatusOr<Runtime*> runtime = Runtime::Get();
  if (!runtime.ok()) return;
  const Driver& driver = (*runtime)->driver();
  absl::StatusOr<PointerAttributes> attributes =
      driver.GetPointerAttributes(ptr);
  if (!attributes.ok() || attributes->memory_type != OPENREG_MEMORY_TYPE_DEVICE) {
    // A deleter must not throw; an unknown pointer here is a core bug.
    TORCH_WARN("openreg: freeing memory the driver does not know: ", ptr);
    return;
  }
  absl::Status status = driver.DeviceFree(attributes->device, ptr);
  if (!status.ok()) TORCH_WARN(status.message());
}

c10::DataPtr DeviceAllocator::allocate(size_t size) {
  return AllocateDeviceMemory(
      static_cast<c10::DeviceIndex>(CurrentDeviceIndex()), size);
}

c10::DataPtr AllocateDeviceMemory(c10::DeviceIndex device, size_t size) {
  Runtime& runtime = RuntimeForDevice(device);
  runtime.MarkDeviceUsed(device);
  absl::StatusOr<void*> ptr = runtime.driver().DeviceMalloc(device, size);
  if (!ptr.ok() && ptr.status().code() == absl::StatusCode::kResourceExhausted) {
    absl::StatusOr<MemoryInfo> info = runtime.driver().MemGetInfo(device);
    const uint64_t total = info.ok() ? info->total_bytes : 0;
    const uint64_t free = info.ok() ? info->free_bytes : 0;
    ThrowStatus(absl::ResourceExhaustedError(absl::StrCat(
        "openreg out of memory on device openreg:", static_cast<int>(device),
        ": tried to allocate ",
        size, " bytes; ", total - free, " bytes are allocated and ", free,
        " free of a capacity of ", total,
        " bytes. Free tensors you no longer need, use smaller batches, or "
        "raise OPENREG_DEVICE_MEMORY (e.g. OPENREG_DEVICE_MEMORY=32GiB) "
        "before the device is first used. (driver: ",
        ptr.status().message(), ")")));
  }
  void* data = ValueOrThrow(std::move(ptr));
  return c10::DataPtr(data, data, &FreeDeviceMemory,
                      c10::Device(c10::DeviceType::PrivateUse1, device));
}

c10::DeleterFnPtr DeviceAllocator::raw_deleter() const {
  return &FreeDeviceMemory;
}

void DeviceAllocator::copy_data(void* dest, const void* src,
                                std::size_t count) const {
  const int32_t device = CurrentDeviceIndex();
  const Driver& driver = RuntimeForDevice(device).driver();
  const openreg_stream stream = CurrentDriverStream(device);
  ThrowIfError(driver.MemcpyAsync(dest, src, count,
                                  OPENREG_MEMCPY_DEVICE_TO_DEVICE, stream));
  ThrowIfError(driver.StreamSynchronize(stream));
}

DeviceAllocator& GetDeviceAllocator() {
  static DeviceAllocator* allocator = new DeviceAllocator();  // never destroyed
  return *allocator;
}

}  // namespace openreg
