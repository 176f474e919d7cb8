#include "core/aten/kernel_memory.h"

#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstring>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/torch_runtime/device_allocator.h"

namespace openreg {
namespace {

constexpr c10::DeviceIndex kNoDevice = -1;

thread_local c10::DeviceIndex kernel_device = kNoDevice;
// The execution offset of kernel_device.
thread_local intptr_t kernel_offset = 0;

// Device allocations made inside kernels, not yet freed or adopted, by the
// execution address the kernel got, with the offset that maps it back.
class KernelAllocationRegistry {
 public:
  void Add(void* ptr, intptr_t execution_offset) {
    absl::MutexLock lock(&mutex_);
    pointers_.emplace(ptr, execution_offset);
    size_.fetch_add(1, std::memory_order_release);
  }

  // Removes `ptr` and returns its execution offset if it was registered.
  std::optional<intptr_t> Remove(void* ptr) {
    if (size_.load(std::memory_order_acquire) == 0) return std::nullopt;
    absl::MutexLock lock(&mutex_);
    auto it = pointers_.find(ptr);
    if (it == pointers_.end()) return std::nullopt;
    const intptr_t execution_offset = it->second;
    pointers_.erase(it);
    size_.fetch_sub(1, std::memory_order_release);
    return execution_offset;
  }

 private:
  absl::Mutex mutex_;
  absl::flat_hash_map<void*, intptr_t> pointers_ ABSL_GUARDED_BY(mutex_);
  // Mirrors pointers_.size() so the common case needs no lock.
  std::atomic<size_t> size_{0};
};

// The device address of the byte a kernel sees at `ptr`.
void* DeviceAddress(void* ptr, intptr_t execution_offset) {
  return static_cast<char*>(ptr) - execution_offset;
}

KernelAllocationRegistry& Registry() {
  static auto* registry = new KernelAllocationRegistry();  // never destroyed
  return *registry;
}

c10::Allocator* DefaultCpuAllocator() {
  static c10::Allocator* allocator = c10::GetDefaultCPUAllocator();
  return allocator;
}

void RoutedFree(void* ptr) {
  if (ptr == nullptr) return;
  if (std::optional<intptr_t> offset = Registry().Remove(ptr)) {
    FreeDeviceMemory(DeviceAddress(ptr, *offset));
  } else {
    DefaultCpuAllocator()->raw_deleter()(ptr);
  }
}

}  // namespace

KernelMemoryRouter::KernelMemoryRouter() { DefaultCpuAllocator(); }

c10::DataPtr KernelMemoryRouter::allocate(size_t size) {
  if (kernel_device == kNoDevice) {
    c10::DataPtr data = DefaultCpuAllocator()->allocate(size);
    void* ptr = data.release_context();
    return c10::DataPtr(ptr, ptr, &RoutedFree, c10::Device(c10::kCPU));
  }
  c10::DataPtr data = AllocateDeviceMemory(kernel_device, size);
  void* ptr = data.release_context();
  if (ptr != nullptr) {
    ptr = static_cast<char*>(ptr) + kernel_offset;
    Registry().Add(ptr, kernel_offset);
  }
  // The kernel sees CPU memory at the execution address; AdoptKernelStorage
  // gives it its device and device address back.
  return c10::DataPtr(ptr, ptr, &RoutedFree, c10::Device(c10::kCPU));
}

c10::DeleterFnPtr KernelMemoryRouter::raw_deleter() const { return &RoutedFree; }

void KernelMemoryRouter::copy_data(void* dest, const void* src,
                                   std::size_t count) const {
  std::memcpy(dest, src, count);
}

KernelMemoryRouter& KernelMemoryRouter::Get() {
  static auto* router = new KernelMemoryRouter();  // never destroyed
  return *router;
}

ScopedKernelMemoryOnDevice::ScopedKernelMemoryOnDevice(
    c10::DeviceIndex device, intptr_t execution_offset)
    : previous_(kernel_device), previous_offset_(kernel_offset) {
  kernel_device = device;
  kernel_offset = execution_offset;
}

ScopedKernelMemoryOnDevice::~ScopedKernelMemoryOnDevice() {
  kernel_device = previous_;
  kernel_offset = previous_offset_;
}

bool AdoptKernelStorage(c10::Storage& cpu_storage, c10::DeviceIndex device,
                        c10::Storage* adopted) {
  c10::StorageImpl* impl = cpu_storage.unsafeGetStorageImpl();
  const c10::DataPtr& data = impl->data_ptr();
  if (data.get_deleter() != &RoutedFree || data.get() == nullptr) return false;
  const std::optional<intptr_t> offset = Registry().Remove(data.get());
  if (!offset.has_value()) return false;
  c10::DataPtr taken = impl->set_data_ptr(c10::DataPtr());
  const size_t nbytes = impl->nbytes();
  impl->set_nbytes(0);
  void* const execution = taken.release_context();
  TORCH_INTERNAL_ASSERT(execution == taken.get(),
                        "kernel allocation changed its context");
  void* const address = DeviceAddress(execution, *offset);
  *adopted = c10::Storage(
      c10::Storage::use_byte_size_t(), nbytes,
      c10::DataPtr(address, address, &FreeDeviceMemory,
                   c10::Device(c10::DeviceType::PrivateUse1, device)),
      &GetDeviceAllocator(), /*resizable=*/true);
  return true;
}

}  // namespace openreg
