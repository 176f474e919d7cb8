#include "core/runtime/host_allocator.h"

#include <c10/util/Exception.h>

#include <cstring>

#include "core/runtime/runtime.h"
#include "core/runtime/torch_status.h"

namespace openreg {
namespace {

void FreeHostMemory(void* ptr) {
  if (ptr == nullptr) return;
  absl::StatusOr<Runtime*> runtime = Runtime::Get();
  if (!runtime.ok()) return;
  absl::Status status = (*runtime)->driver().HostFree(ptr);
  if (!status.ok()) TORCH_WARN(status.message());
}

}  // namespace

c10::DataPtr HostAllocator::allocate(size_t size) {
  void* data = ValueOrThrow(RuntimeOrThrow().driver().HostMalloc(size));
  return c10::DataPtr(data, data, &FreeHostMemory,
                      c10::Device(c10::DeviceType::CPU));
}

c10::DeleterFnPtr HostAllocator::raw_deleter() const { return &FreeHostMemory; }

void HostAllocator::copy_data(void* dest, const void* src,
                              std::size_t count) const {
  std::memcpy(dest, src, count);
}

HostAllocator& GetHostAllocator() {
  static HostAllocator* allocator = new HostAllocator();  // never destroyed
  return *allocator;
}

bool IsPinnedHostPointer(const void* ptr) {
  // Asking never initializes the driver: nothing is pinned before it exists.
  if (!Runtime::IsInitialized()) return false;
  absl::StatusOr<PointerAttributes> attributes =
      RuntimeOrThrow().driver().GetPointerAttributes(ptr);
  return attributes.ok() && attributes->memory_type == OPENREG_MEMORY_TYPE_HOST;
}

}  // namespace openreg
