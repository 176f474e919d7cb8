#include "plugins/sim_support/device_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {
namespace {

uint64_t PageSize() {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

uint64_t RoundUpToPages(uint64_t bytes) {
  return (bytes + PageSize() - 1) & ~(PageSize() - 1);
}

// Each view spans this many times the capacity. The capacity check counts
// bytes, as a device's memory manager would; the spare address space keeps
// holes between live allocations (the caching allocator frees blocks in any
// order) from failing an allocation the capacity allows. Address space costs
// nothing: the reservation commits no memory.
constexpr uint64_t kViewSpanPerCapacity = 2;

// Address space with no access and no memory committed behind it.
constexpr int kReserveFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

}  // namespace

DeviceMemory::DeviceMemory(int32_t device, uint64_t capacity_bytes,
                           uint64_t retain_limit)
    : device_(device),
      capacity_bytes_(capacity_bytes),
      view_bytes_(kViewSpanPerCapacity * RoundUpToPages(capacity_bytes)),
      reserved_bytes_(2 * view_bytes_),
      retain_limit_(retain_limit),
      ranges_(view_bytes_, PageSize()) {
  void* reserved =
      mmap(nullptr, reserved_bytes_, PROT_NONE, kReserveFlags, -1, 0);
  if (reserved == MAP_FAILED) {
    reservation_errno_ = errno;
    return;
  }
  device_view_ = reinterpret_cast<uintptr_t>(reserved);
  execution_offset_ = static_cast<intptr_t>(view_bytes_);
}

DeviceMemory::~DeviceMemory() {
  if (device_view_ != 0) {
    munmap(reinterpret_cast<void*>(device_view_), reserved_bytes_);
  }
}

openreg_status DeviceMemory::Allocate(size_t size, void** ptr) {
  if (device_view_ == 0) {
    return Fail(OPENREG_ERROR_OUT_OF_MEMORY,
                absl::StrFormat("device %d has no memory: the driver could "
                                "not reserve %u bytes of address space for "
                                "it (%s); configure a smaller device memory "
                                "size (OPENREG_DEVICE_MEMORY)",
                                device_, reserved_bytes_,
                                std::strerror(reservation_errno_)));
  }
  absl::MutexLock lock(&mu_);
  const uint64_t in_use = bytes_in_use_;
  if (size > capacity_bytes_ - in_use) {
    return Fail(OPENREG_ERROR_OUT_OF_MEMORY,
                absl::StrFormat("device %d out of memory: requested %u bytes, "
                                "%u of %u bytes in use; free device memory or "
                                "raise the configured device memory size",
                                device_, size, in_use, capacity_bytes_));
  }
  const std::optional<uint64_t> offset = ranges_.Allocate(size);
  if (!offset.has_value()) {
    return Fail(
        OPENREG_ERROR_OUT_OF_MEMORY,
        absl::StrFormat(
            "device %d out of memory: requested %u bytes "
            "(%u in whole pages), but its largest free "
            "address range is %u bytes (%u of %u bytes in use, the rest "
            "fragmented); free device memory or raise "
            "the configured device memory size",
            device_, size, ranges_.RoundUp(size), ranges_.largest_hole(),
            in_use, capacity_bytes_));
  }
  const uintptr_t address = device_view_ + *offset;
  const uint64_t length = ranges_.RoundUp(size);
  // Retained pages are read/write already (Note [Retained execution pages]);
  // mprotect over a partly retained range leaves those pages as they are.
  void* execution = reinterpret_cast<void*>(address + execution_offset_);
  if (!retained_.Contains(*offset, length) &&
      mprotect(execution, length, PROT_READ | PROT_WRITE) != 0) {
    const int error = errno;
    ranges_.Release(*offset, size);
    return Fail(OPENREG_ERROR_OUT_OF_MEMORY,
                absl::StrFormat("device %d out of memory: the host could not "
                                "commit %u bytes to back the allocation (%s; "
                                "%u of %u device bytes in use)",
                                device_, size, std::strerror(error), in_use,
                                capacity_bytes_));
  }
  retained_.Erase(*offset, length);
  live_.emplace(address, LiveAllocation{size});
  bytes_in_use_ += size;
  *ptr = reinterpret_cast<void*>(address);
  return OPENREG_SUCCESS;
}

openreg_status DeviceMemory::Free(void* ptr) {
  absl::MutexLock lock(&mu_);
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  auto it = live_.find(address);
  if (it == live_.end()) {
    auto after = live_.upper_bound(address);
    if (after != live_.begin()) {
      const auto& [base, allocation] = *std::prev(after);
      if (address - base < allocation.size) {
        return Fail(
            OPENREG_ERROR_INVALID_ARGUMENT,
            absl::StrFormat("device_free: %p points %u bytes into "
                            "the allocation at %p (%u bytes) of "
                            "device %d; pass the base pointer that "
                            "device_malloc returned",
                            ptr, address - base, reinterpret_cast<void*>(base),
                            allocation.size, device_));
      }
    }
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("device_free: %p is not a live allocation of "
                                "device %d; it was never returned by "
                                "device_malloc on this device, or was already "
                                "freed",
                                ptr, device_));
  }
  const uint64_t size = it->second.size;
  const uint64_t offset = address - device_view_;
  const uint64_t length = ranges_.RoundUp(size);
  // retained_ never holds more than retain_limit_, so this cannot wrap.
  if (length <= retain_limit_ - retained_.bytes()) {
    // Kept read/write for the next allocation of these pages (Note
    // [Retained execution pages]): no system call.
    retained_.Insert(offset, length);
  } else {
    // A fresh PROT_NONE mapping over the execution pages drops their
    // contents and their commit charge in one call.
    void* execution = reinterpret_cast<void*>(address + execution_offset_);
    if (mmap(execution, length, PROT_NONE, kReserveFlags | MAP_FIXED, -1, 0) ==
        MAP_FAILED) {
      return Fail(OPENREG_ERROR_INTERNAL,
                  absl::StrFormat("device_free: could not release the pages "
                                  "of the allocation at %p (%u bytes) of "
                                  "device %d: %s",
                                  ptr, size, device_, std::strerror(errno)));
    }
  }
  live_.erase(it);
  ranges_.Release(offset, size);
  bytes_in_use_ -= size;
  return OPENREG_SUCCESS;
}

std::optional<Allocation> DeviceMemory::Find(const void* ptr) const {
  if (!InDeviceView(ptr)) return std::nullopt;
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  absl::MutexLock lock(&mu_);
  auto after = live_.upper_bound(address);
  if (after == live_.begin()) return std::nullopt;
  const auto& [base, allocation] = *std::prev(after);
  if (address - base >= allocation.size) return std::nullopt;
  return Allocation{reinterpret_cast<void*>(base), allocation.size};
}

uint64_t DeviceMemory::bytes_in_use() const {
  absl::MutexLock lock(&mu_);
  return bytes_in_use_;
}

uint64_t DeviceMemory::retained_bytes() const {
  absl::MutexLock lock(&mu_);
  return retained_.bytes();
}

}  // namespace openreg::sim
