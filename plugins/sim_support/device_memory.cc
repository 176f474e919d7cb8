#include "plugins/sim_support/device_memory.h"

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {

DeviceMemory::DeviceMemory(int32_t device, uint64_t capacity_bytes)
    : device_(device), capacity_bytes_(capacity_bytes) {}

openreg_status DeviceMemory::Allocate(size_t size, void** ptr) {
  absl::MutexLock lock(&mu_);
  const uint64_t in_use = table_.bytes_in_use();
  if (size > capacity_bytes_ - in_use) {
    return Fail(OPENREG_ERROR_OUT_OF_MEMORY,
                absl::StrFormat("device %d out of memory: requested %u bytes, "
                                "%u of %u bytes in use; free device memory or "
                                "raise the configured device memory size",
                                device_, size, in_use, capacity_bytes_));
  }
  void* block = table_.Allocate(size);
  if (block == nullptr) {
    return Fail(OPENREG_ERROR_OUT_OF_MEMORY,
                absl::StrFormat("device %d out of memory: the host could not "
                                "provide %u bytes to back the allocation "
                                "(%u of %u device bytes in use)",
                                device_, size, in_use, capacity_bytes_));
  }
  *ptr = block;
  return OPENREG_SUCCESS;
}

openreg_status DeviceMemory::Free(void* ptr) {
  absl::MutexLock lock(&mu_);
  const std::optional<Allocation> owner = table_.Find(ptr);
  if (!owner.has_value()) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("device_free: %p is not a live allocation of "
                                "device %d; it was never returned by "
                                "device_malloc on this device, or was already "
                                "freed",
                                ptr, device_));
  }
  if (owner->base != ptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("device_free: %p points %u bytes into the "
                                "allocation at %p (%u bytes) of device %d; "
                                "pass the base pointer that device_malloc "
                                "returned",
                                ptr, owner->OffsetOf(ptr), owner->base,
                                owner->size, device_));
  }
  table_.Erase(ptr);
  return OPENREG_SUCCESS;
}

std::optional<Allocation> DeviceMemory::Find(const void* ptr) const {
  absl::MutexLock lock(&mu_);
  return table_.Find(ptr);
}

uint64_t DeviceMemory::bytes_in_use() const {
  absl::MutexLock lock(&mu_);
  return table_.bytes_in_use();
}

}  // namespace openreg::sim
