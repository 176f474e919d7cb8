#include "plugins/sim_support/pinned_host_memory.h"

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {

openreg_status PinnedHostMemory::Allocate(size_t size, void** ptr) {
  absl::MutexLock lock(&mu_);
  void* block = table_.Allocate(size);
  if (block == nullptr) {
    return Fail(OPENREG_ERROR_OUT_OF_MEMORY,
                absl::StrFormat("host_malloc: the host could not provide %u "
                                "bytes of pinned memory",
                                size));
  }
  *ptr = block;
  return OPENREG_SUCCESS;
}

openreg_status PinnedHostMemory::Free(void* ptr) {
  absl::MutexLock lock(&mu_);
  const std::optional<Allocation> owner = table_.Find(ptr);
  if (!owner.has_value()) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("host_free: %p is not a live pinned host "
                                "allocation; it was never returned by "
                                "host_malloc, or was already freed",
                                ptr));
  }
  if (owner->base != ptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("host_free: %p points %u bytes into the "
                                "pinned allocation at %p (%u bytes); pass the "
                                "base pointer that host_malloc returned",
                                ptr, owner->OffsetOf(ptr), owner->base,
                                owner->size));
  }
  table_.Erase(ptr);
  return OPENREG_SUCCESS;
}

std::optional<Allocation> PinnedHostMemory::Find(const void* ptr) const {
  absl::MutexLock lock(&mu_);
  return table_.Find(ptr);
}

}  // namespace openreg::sim
