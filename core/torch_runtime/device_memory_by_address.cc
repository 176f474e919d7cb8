#include "core/torch_runtime/device_memory_by_address.h"

#include <c10/core/Allocator.h>
#include <c10/core/StreamGuard.h>
#include <c10/util/Exception.h>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace openreg {
namespace {

// The addresses handed out and not freed yet.
class LiveAddresses {
 public:
  void Insert(uintptr_t address) {
    absl::MutexLock lock(&mutex_);
    live_.insert(address);
  }
  // Whether `address` was live; it is not any more.
  bool Erase(uintptr_t address) {
    absl::MutexLock lock(&mutex_);
    return live_.erase(address) == 1;
  }

 private:
  absl::Mutex mutex_;
  absl::flat_hash_set<uintptr_t> live_ ABSL_GUARDED_BY(mutex_);
};

LiveAddresses& Live() {
  static LiveAddresses* live = new LiveAddresses();  // never destroyed
  return *live;
}

}  // namespace

uintptr_t AllocateDeviceMemoryByAddress(int64_t size, c10::Stream stream) {
  TORCH_CHECK(size >= 0,
              "caching_allocator_alloc: size must be a number of bytes, 0 or "
              "more, got ",
              size);
  // Allocates on the stream's device, stream-ordered on the stream.
  const c10::StreamGuard guard(stream);
  void* memory = c10::GetAllocator(c10::DeviceType::PrivateUse1)
                     ->raw_allocate(static_cast<size_t>(size));
  const uintptr_t address = reinterpret_cast<uintptr_t>(memory);
  Live().Insert(address);
  return address;
}

void FreeDeviceMemoryByAddress(uintptr_t address) {
  TORCH_CHECK(Live().Erase(address), "caching_allocator_delete: ",
              absl::StrFormat("%#x", address),
              " is not memory that torch.openreg.caching_allocator_alloc "
              "returned, or it was freed already; nothing was freed. Pass an "
              "address caching_allocator_alloc returned, once (a tensor's "
              "memory is freed with the tensor).");
  c10::GetAllocator(c10::DeviceType::PrivateUse1)
      ->raw_deallocate(reinterpret_cast<void*>(address));
}

}  // namespace openreg
