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
//     which also drops their contents, unless it retains them (Note
//     [Retained execution pages]).
// The driver's own threads (copies, memsets, host functions) reach the bytes
// at device address + execution_offset(): one add, no lookup and no
// protection change per access, so any number of streams may run at once.
// The ABI's device_execution_offset reports the offset to the core, which
// translates wherever it hands device memory to code it runs on the driver's
// threads (docs/memory.md, "Device memory the host cannot touch").
// Allocations take whole pages; capacity accounting counts the bytes asked
// for, as before.
//
// Note [Retained execution pages]
// Changing the execution view costs a system call each way (mprotect to
// allocate, mmap to drop), ~6 us for a cache-missing device_malloc + free
// against ~0.5 us with plain host memory. So device_free keeps the execution
// pages of a freed range read/write ("retained"), as long as the retained
// total stays within retain_limit (the retain_freed_memory driver option,
// kDefaultRetainFreedBytes by default); a free that would pass the bound, so
// any free larger than it, drops its pages as before. device_malloc needs no
// system call when its whole range is retained (first fit hands the lowest
// hole out again, usually the range just freed); otherwise one mprotect over
// the range, which leaves the retained part's pages as they are. Either way
// the range leaves the retained set.
// What it keeps and what it does not:
//   - the device view is untouched: a device address faults on host access
//     whether its pages are live, retained or dropped;
//   - a retained range is free: it counts neither in bytes_in_use() nor
//     against the capacity; retained_bytes() reports it;
//   - its pages keep the memory (RSS) they had when freed, up to the bound
//     per device; pages never written cost nothing;
//   - a new allocation's contents are unspecified (the ABI promises none):
//     stale bytes on retained pages, zeros on fresh ones;
//   - driver-thread code that keeps an execution address past device_free
//     reads stale bytes instead of faulting; retain_freed_memory=0 restores
//     the fault, for hunting such a use after free.
//
// Ownership: owns the reservation, and so every allocation, until
// destruction, which unmaps both views.
// Thread-safety: all members may be called concurrently; mu_ guards the range
// allocator, the live allocations and the retained ranges. The reservation and
// offset are set at construction. Errors are reported with Fail(), so
// Allocate/Free are meant for API-call threads: threaded_sim's worker threads
// touch only the memory itself, whose lifetime the caller guarantees
// (device_free only after the work using it finished).
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
#include "plugins/sim_support/range_set.h"

namespace openreg::sim {

// The ABI requires device memory aligned to at least 256 bytes; pages are.
inline constexpr size_t kDeviceMemoryAlignment = 256;

// How many bytes of freed execution pages a device keeps committed by
// default (Note [Retained execution pages]): a few of the caching allocator's
// 20 MiB large-pool segments, or dozens of its 2 MiB small ones.
inline constexpr uint64_t kDefaultRetainFreedBytes = uint64_t{64} << 20;

class DeviceMemory {
 public:
  // Reserves both views for `capacity_bytes` (rounded up to whole pages). If
  // the reservation fails, every Allocate fails with OUT_OF_MEMORY saying
  // why. Frees retain up to `retain_limit` bytes of execution pages (Note
  // [Retained execution pages]).
  DeviceMemory(int32_t device, uint64_t capacity_bytes,
               uint64_t retain_limit = kDefaultRetainFreedBytes);
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
  // Free bytes whose execution pages are still committed (whole pages).
  uint64_t retained_bytes() const;

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
  const uint64_t retain_limit_;
  uintptr_t device_view_ = 0;
  int reservation_errno_ = 0;
  intptr_t execution_offset_ = 0;
  mutable absl::Mutex mu_;
  AddressRangeAllocator ranges_ ABSL_GUARDED_BY(mu_);
  // Device address -> allocation.
  absl::btree_map<uintptr_t, LiveAllocation> live_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_in_use_ ABSL_GUARDED_BY(mu_) = 0;
  // Free ranges (offsets into the views) whose execution pages are read/write
  // (Note [Retained execution pages]); always inside ranges_' holes, and at
  // most retain_limit_ bytes.
  RangeSet retained_ ABSL_GUARDED_BY(mu_);
};

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_DEVICE_MEMORY_H_
