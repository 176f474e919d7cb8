#include "core/aten/kernel_memory.h"

#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "core/torch_runtime/device_allocator.h"

namespace openreg {
namespace {

constexpr c10::DeviceIndex kNoDevice = -1;

thread_local c10::DeviceIndex kernel_device = kNoDevice;

// Device allocations made inside kernels, not yet freed or adopted.
class KernelAllocationRegistry {
 public:
  void Add(void* ptr) {
    absl::MutexLock lock(&mutex_);
    pointers_.insert(ptr);
    size_.fetch_add(1, std::memory_order_release);
  }

  // Removes `ptr` and returns true if it was registered.
  bool Remove(void* ptr) {
    if (size_.load(std::memory_order_acquire) == 0) return false;
    absl::MutexLock lock(&mutex_);
    if (pointers_.erase(ptr) == 0) return false;
    size_.fetch_sub(1, std::memory_order_release);
    return true;
  }

 private:
  absl::Mutex mutex_;
  absl::flat_hash_set<void*> pointers_ ABSL_GUARDED_BY(mutex_);
  // Mirrors pointers_.size() so the common case needs no lock.
  std::atomic<size_t> size_{0};
};

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
  if (Registry().Remove(ptr)) {
    FreeDeviceMemory(ptr);
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
  if (ptr != nullptr) Registry().Add(ptr);
  // The kernel sees CPU memory; AdoptKernelStorage gives it its device back.
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

ScopedKernelMemoryOnDevice::ScopedKernelMemoryOnDevice(c10::DeviceIndex device)
    : previous_(kernel_device) {
  kernel_device = device;
}

ScopedKernelMemoryOnDevice::~ScopedKernelMemoryOnDevice() {
  kernel_device = previous_;
}

bool AdoptKernelStorage(c10::Storage& cpu_storage, c10::DeviceIndex device,
                        c10::Storage* adopted) {
  c10::StorageImpl* impl = cpu_storage.unsafeGetStorageImpl();
  const c10::DataPtr& data = impl->data_ptr();
  if (data.get_deleter() != &RoutedFree || data.get() == nullptr ||
      !Registry().Remove(data.get())) {
    return false;
  }
  c10::DataPtr taken = impl->set_data_ptr(c10::DataPtr());
  const size_t nbytes = impl->nbytes();
  impl->set_nbytes(0);
  const bool swapped =
      taken.compare_exchange_deleter(&RoutedFree, &FreeDeviceMemory);
  TORCH_INTERNAL_ASSERT(swapped, "kernel allocation changed its deleter");
  taken.unsafe_set_device(c10::Device(c10::DeviceType::PrivateUse1, device));
  *adopted = c10::Storage(c10::Storage::use_byte_size_t(), nbytes,
                          std::move(taken), &GetDeviceAllocator(),
                          /*resizable=*/true);
  return true;
}

}  // namespace openreg
