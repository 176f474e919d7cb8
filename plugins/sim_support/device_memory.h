// The memory of one simulated device, which the host cannot touch.
//
// Note [Device view and execution view]
// On hardware, host code that dereferences a device pointer faults. To
// simulate that, each device reserves two adjacent ranges of address space
// (each twice its capacity, so that holes between allocations do not fail
// one the capacity allows) with mmap(PROT_NONE, MAP_NORESERVE) (no memory is
// committed until used):
//   - the device view, [base, base + span): what device_malloc hands out.
//     It stays PROT_NONE forever, so any host access faults (SIGSEGV), and a
//     device address never aliases real host memory;
//   - the execution view, the same range shifted by execution_offset() (the
//     span): device_malloc makes the pages behind a new allocation
//     readable and writable there, and device_free maps them PROT_NONE again,
//     which also drops their contents.
// The driver's own threads (copies, memsets, host functions) reach the bytes
// at device address + execution_offset(): one add, no lookup and no
// protection change per access, so any number of streams may run at once.
// The ABI's device_execution_offset reports the offset to the core, which
// translates wherever it hands device memory to code it runs on the driver's
// threads (docs/memory.md, "Device memory the host cannot touch").
// Allocations take whole pages; capacity accounting counts the bytes asked
// for, as before.
//
// Ownership: owns the reservation, and so every allocation, until
// destruction, which unmaps both views.
// Thread-safety: all members may be called concurrently; mu_ guards the range
// allocator and the live allocations. The reservation and offset are set at
// construction. Errors are reported with Fail(), so Allocate/Free are meant
// for API-call threads: threaded_sim's worker threads touch only the memory
// itself, whose lifetime the caller guarantees (device_free only after the
// work using it finished).
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_DEVICE_MEMORY_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_DEVICE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/synchronization/mutex.h"
#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/address_range_allocator.h"
#include "plugins/sim_support/allocation_table.h"

namespace openreg::sim {

// The ABI requires device memory aligned to at least 256 bytes; pages are.
inline constexpr size_t kDeviceMemoryAlignment = 256;

class DeviceMemory {
 public:
  // Reserves both views for `capacity_bytes` (rounded up to whole pages). If
  // the reservation fails, every Allocate fails with OUT_OF_MEMORY saying
  // why.
  DeviceMemory(int32_t device, uint64_t capacity_bytes);
  ~DeviceMemory();

  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // device_malloc for a non-zero `size`: OUT_OF_MEMORY past the capacity.
  openreg_status Allocate(size_t size, void** ptr);

  // device_free for a non-NULL `ptr`: INVALID_ARGUMENT unless `ptr` is the
  // base of a live allocation of this device.
  openreg_status Free(void* ptr);

  // The live allocation of this device that contains `ptr`, if any.
  std::optional<Allocation> Find(const void* ptr) const;

  // Whether `ptr` lies in this device's device view (allocated or not).
  bool InDeviceView(const void* ptr) const {
    return reinterpret_cast<uintptr_t>(ptr) - device_view_ < view_bytes_;
  }

  // Device address + execution_offset() = where the driver's threads access
  // the bytes (Note [Device view and execution view]).
  intptr_t execution_offset() const { return execution_offset_; }

  uint64_t bytes_in_use() const;
  uint64_t capacity_bytes() const { return capacity_bytes_; }

 private:
  struct LiveAllocation {
    uint64_t size;  // as requested
  };

  const int32_t device_;
  const uint64_t capacity_bytes_;
  // Both views as one mapping: the device view, then the execution view
  // (one view when host-accessible). device_view_ is 0 when the reservation
  // failed.
  const uint64_t view_bytes_;
  const uint64_t reserved_bytes_;
  uintptr_t device_view_ = 0;
  int reservation_errno_ = 0;
  intptr_t execution_offset_ = 0;
  mutable absl::Mutex mu_;
  AddressRangeAllocator ranges_ ABSL_GUARDED_BY(mu_);
  // Device address -> allocation.
  absl::btree_map<uintptr_t, LiveAllocation> live_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_in_use_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_DEVICE_MEMORY_H_
