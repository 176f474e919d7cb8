// ValidationTracker: what the driver validation layer (validation_layer.h)
// knows about one driver context, and the checks made against it: how many
// devices it has, and which streams, events, device allocations and pinned
// host allocations are live or were destroyed.
//
// Every check returns OK or an error whose message says what was wrong with
// the argument, what was expected and how to fix it; the layer prefixes the
// call. Codes: kOutOfRange for a device index outside [0, device_count),
// kInvalidArgument for everything else, as the ABI prescribes for each.
//
// Destroying or freeing is split into Take (check and forget, before the
// driver is called) and Return (remember again, when the driver refused):
// forgetting first means a handle the driver reuses for a new object at once,
// on another thread, is never mistaken for the destroyed one.
//
// Thread-safety: every method may be called concurrently; one mutex guards
// all state, and no method calls into the driver.
#ifndef OPENREG_CORE_DRIVER_VALIDATION_TRACKER_H_
#define OPENREG_CORE_DRIVER_VALIDATION_TRACKER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "core/driver/tracked_objects.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

// What the tracker knows of an event.
struct TrackedEventState {
  int32_t device = 0;
  uint32_t flags = 0;
  bool recorded = false;
};

// What the tracker knows of an allocation.
struct TrackedAllocation {
  int32_t device = -1;  // -1 for pinned host memory
  uint64_t size = 0;
};

class ValidationTracker {
 public:
  using EventState = TrackedEventState;
  using Allocation = TrackedAllocation;

  // How many destroyed objects of each kind are remembered (see
  // tracked_objects.h); older ones are reported as unknown.
  static constexpr size_t kGraveyardCapacity = 4096;

  // Tracks a context with `device_count` devices.
  explicit ValidationTracker(int32_t device_count);

  // The context was destroyed: every handle and allocation becomes
  // destroyed.
  void DestroyAll();

  absl::Status CheckDevice(int32_t device) const;

  // The device of a live stream.
  absl::StatusOr<int32_t> LiveStream(openreg_stream stream,
                                     absl::string_view argument) const;
  absl::StatusOr<EventState> LiveEvent(openreg_event event,
                                       absl::string_view argument) const;

  void AddStream(openreg_stream stream, int32_t device);
  absl::StatusOr<int32_t> TakeStream(openreg_stream stream);
  void ReturnStream(openreg_stream stream, int32_t device);

  void AddEvent(openreg_event event, int32_t device, uint32_t flags);
  void MarkRecorded(openreg_event event);
  absl::StatusOr<EventState> TakeEvent(openreg_event event);
  void ReturnEvent(openreg_event event, const EventState& state);

  void AddDeviceAllocation(const void* ptr, int32_t device, uint64_t size);
  // `ptr` is the start of a live allocation of `device`.
  absl::StatusOr<Allocation> TakeDeviceAllocation(int32_t device,
                                                  const void* ptr);
  void AddHostAllocation(const void* ptr, uint64_t size);
  absl::StatusOr<Allocation> TakeHostAllocation(const void* ptr);
  // Puts back an allocation that Take*Allocation removed.
  void ReturnAllocation(const void* ptr, const Allocation& allocation);

  // [ptr, ptr + size) lies inside one live device allocation.
  absl::Status CheckDeviceRange(const void* ptr, size_t size,
                                absl::string_view argument) const;
  // [ptr, ptr + size) is host memory: not device memory, and inside its
  // pinned allocation if it starts in one. Pageable memory is not tracked.
  absl::Status CheckHostRange(const void* ptr, size_t size,
                              absl::string_view argument) const;

  // device_execution_offset reported `offset` for `device` (a valid index):
  // OK the first time and whenever it repeats the first report; otherwise an
  // error, as the ABI requires the offset to stay constant. Known offsets
  // also let the range checks recognize an execution alias passed where the
  // device address belongs.
  absl::Status RecordExecutionOffset(int32_t device, intptr_t offset);

 private:
  using Allocations = TrackedObjects<uintptr_t, Allocation>;

  // Why `ptr` (not a live allocation start) cannot be freed.
  absl::Status NotAnAllocationLocked(const void* ptr,
                                     absl::string_view allocator) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The live allocation of either kind containing `ptr`, if any.
  std::optional<Allocations::Entry> ContainingLocked(const void* ptr) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // If `ptr` is the execution alias (device address + a reported non-zero
  // offset) of a live device allocation, an error saying so; else OK.
  absl::Status NotAnExecutionAliasLocked(const void* ptr,
                                         absl::string_view argument) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  const int32_t device_count_;
  TrackedObjects<openreg_stream, int32_t> streams_ ABSL_GUARDED_BY(mu_);
  TrackedObjects<openreg_event, EventState> events_ ABSL_GUARDED_BY(mu_);
  Allocations device_allocations_ ABSL_GUARDED_BY(mu_);
  Allocations host_allocations_ ABSL_GUARDED_BY(mu_);
  // Per device: the offset device_execution_offset first reported, if any.
  std::vector<std::optional<intptr_t>> execution_offsets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace openreg

#endif  // OPENREG_CORE_DRIVER_VALIDATION_TRACKER_H_
