#include "core/aten/kernel_memory.h"

#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstring>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/aten/result_memory_plan.h"
#include "core/torch_runtime/device_allocator.h"

namespace openreg {
namespace {

constexpr c10::DeviceIndex kNoDevice = -1;

thread_local c10::DeviceIndex kernel_device = kNoDevice;
// The execution offset of kernel_device.
thread_local intptr_t kernel_offset = 0;
// The outputs whose memory this thread's kernel may be lent (Note [Results
// computed in their outputs' memory]), or null.
thread_local ResultMemoryPlan* result_plan = nullptr;

// Memory handed to kernels from the device: allocations made inside
// kernels, not yet freed or adopted, and output memory lent to a kernel,
// until the loan ends. By the execution address the kernel got.
//
// A loan a kernel kept past its return (EndLoan) stays registered until the
// kernel's buffer is freed. If its output was dropped, the memory went back
// to the stream's later work and may be handed out again at the same
// address while the buffer lives: the kept entry then steps aside for the
// new one. A free at that address removes a kept entry first, which frees
// nothing: whichever of the two buffers is really freed, the new
// allocation's memory is released at the earliest when it is.
class KernelAllocationRegistry {
 public:
  struct Entry {
    // What maps the address back to the device address.
    intptr_t execution_offset;
    // Output memory on loan: the output owns it, so freeing it does nothing.
    bool lent;
    // A loan whose kernel returned while still holding a buffer in it.
    bool kept = false;
    // For a kept loan: the output's storage if the caller still had it,
    // kept alive until the kernel's buffer is freed, so the memory is not
    // handed out again under it.
    c10::Storage output;
  };

  void Add(void* ptr, Entry entry) {
    absl::MutexLock lock(&mutex_);
    auto [it, added] = pointers_.try_emplace(ptr, std::move(entry));
    if (!added) {
      TORCH_INTERNAL_ASSERT(it->second.kept,
                            "openreg internal error: kernel memory at ", ptr,
                            " handed out twice");
      kept_aside_[ptr].push_back(std::move(it->second));
      it->second = std::move(entry);
    }
    size_.fetch_add(1, std::memory_order_release);
  }

  // Whether anything is registered at `ptr`.
  bool Contains(void* ptr) {
    if (size_.load(std::memory_order_acquire) == 0) return false;
    absl::MutexLock lock(&mutex_);
    return pointers_.contains(ptr) || kept_aside_.contains(ptr);
  }

  // Marks the loan at `ptr` kept, with `output` alive if it still is (the
  // lock is taken here, so a failed call touches no storage); false if
  // there is no loan at `ptr`.
  bool KeepOutputAlive(
      void* ptr, const c10::weak_intrusive_ptr<c10::StorageImpl>& output) {
    absl::MutexLock lock(&mutex_);
    auto it = pointers_.find(ptr);
    if (it == pointers_.end() || !it->second.lent || it->second.kept) {
      return false;
    }
    it->second.kept = true;
    it->second.output = c10::Storage(output.lock());
    return true;
  }

  // Why an entry is removed, which says which entries qualify.
  enum class Removal {
    kFree,      // its buffer was freed: a kept loan that stepped aside first
    kAdopt,     // an allocation becomes an openreg storage: no loan
    kEndLoan,   // a loan ends with its kernel: only a loan still running
  };

  // Removes an entry at `ptr` that qualifies for `removal` and returns it,
  // if there is one.
  std::optional<Entry> Remove(void* ptr, Removal removal) {
    if (size_.load(std::memory_order_acquire) == 0) return std::nullopt;
    absl::MutexLock lock(&mutex_);
    if (removal == Removal::kFree) {
      if (auto aside = kept_aside_.find(ptr); aside != kept_aside_.end()) {
        Entry entry = std::move(aside->second.back());
        aside->second.pop_back();
        if (aside->second.empty()) kept_aside_.erase(aside);
        size_.fetch_sub(1, std::memory_order_release);
        return entry;
      }
    }
    auto it = pointers_.find(ptr);
    if (it == pointers_.end()) return std::nullopt;
    const Entry& found = it->second;
    if ((removal == Removal::kAdopt && found.lent) ||
        (removal == Removal::kEndLoan && (!found.lent || found.kept))) {
      return std::nullopt;
    }
    Entry entry = std::move(it->second);
    pointers_.erase(it);
    size_.fetch_sub(1, std::memory_order_release);
    return entry;
  }

 private:
  absl::Mutex mutex_;
  absl::flat_hash_map<void*, Entry> pointers_ ABSL_GUARDED_BY(mutex_);
  // Kept loans whose address was handed out again, by address.
  absl::flat_hash_map<void*, std::vector<Entry>> kept_aside_
      ABSL_GUARDED_BY(mutex_);
  // The number of entries in both maps, so the common case needs no lock.
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
  if (std::optional<KernelAllocationRegistry::Entry> entry =
          Registry().Remove(ptr, KernelAllocationRegistry::Removal::kFree)) {
    if (!entry->lent) {
      FreeDeviceMemory(DeviceAddress(ptr, entry->execution_offset));
    }
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
  if (result_plan != nullptr) {
    if (void* lent = result_plan->Lend(size)) {
      Registry().Add(lent, {kernel_offset, /*lent=*/true, c10::Storage()});
      return c10::DataPtr(lent, lent, &RoutedFree, c10::Device(c10::kCPU));
    }
  }
  c10::DataPtr data = AllocateDeviceMemory(kernel_device, size);
  // Freed by its address from here on (RoutedFree): the context goes.
  void* ptr = data.get();
  data.release_context();
  if (ptr != nullptr) {
    ptr = static_cast<char*>(ptr) + kernel_offset;
    Registry().Add(ptr, {kernel_offset, /*lent=*/false, c10::Storage()});
    if (result_plan != nullptr) result_plan->Record(size, ptr);
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

ScopedResultMemoryPlan::ScopedResultMemoryPlan(ResultMemoryPlan* plan)
    : previous_(result_plan) {
  result_plan = plan;
}

ScopedResultMemoryPlan::~ScopedResultMemoryPlan() { result_plan = previous_; }

bool EndLoan(void* lent, c10::StorageImpl* holder,
             const c10::weak_intrusive_ptr<c10::StorageImpl>& output) {
  if (holder != nullptr && holder->data() == lent) {
    // The storage keeps the memory as a view: the output owns it.
    c10::DataPtr owning =
        holder->set_data_ptr(c10::DataPtr(lent, c10::Device(c10::kCPU)));
    owning.release_context();
    Registry().Remove(lent, KernelAllocationRegistry::Removal::kEndLoan);
    return true;
  }
  // Either freed inside the kernel, or still held by something else.
  return !Registry().KeepOutputAlive(lent, output);
}

bool MayLendOutputMemory(void* execution_address) {
  return !Registry().Contains(execution_address);
}

bool AdoptKernelStorage(c10::Storage& cpu_storage, c10::DeviceIndex device,
                        c10::Storage* adopted) {
  c10::StorageImpl* impl = cpu_storage.unsafeGetStorageImpl();
  const c10::DataPtr& data = impl->data_ptr();
  if (data.get_deleter() != &RoutedFree || data.get() == nullptr) return false;
  // Memory lent from an output is the output's; it is never adopted.
  const std::optional<KernelAllocationRegistry::Entry> entry =
      Registry().Remove(data.get(), KernelAllocationRegistry::Removal::kAdopt);
  if (!entry.has_value()) return false;
  c10::DataPtr taken = impl->set_data_ptr(c10::DataPtr());
  const size_t nbytes = impl->nbytes();
  impl->set_nbytes(0);
  void* const execution = taken.release_context();
  TORCH_INTERNAL_ASSERT(execution == taken.get(),
                        "kernel allocation changed its context");
  void* const address = DeviceAddress(execution, entry->execution_offset);
  *adopted = c10::Storage(
      c10::Storage::use_byte_size_t(), nbytes,
      c10::DataPtr(address, address, &FreeDeviceMemory,
                   c10::Device(c10::DeviceType::PrivateUse1, device)),
      &GetStorageAllocator(), /*resizable=*/true);
  return true;
}

}  // namespace openreg
