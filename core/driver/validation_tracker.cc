#include "core/driver/validation_tracker.h"

#include <optional>

#include "absl/strings/str_format.h"

namespace openreg {
namespace {

uintptr_t Address(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr); }

bool Contains(uintptr_t base, uint64_t size, uintptr_t address) {
  return address >= base && address - base < size;
}

// "device memory of device 1" or "pinned host memory".
std::string Describe(const ValidationTracker::Allocation& allocation) {
  return allocation.device < 0
             ? std::string("pinned host memory")
             : absl::StrFormat("device memory of device %d", allocation.device);
}

}  // namespace

ValidationTracker::ValidationTracker(int32_t device_count)
    : device_count_(device_count),
      streams_(kGraveyardCapacity),
      events_(kGraveyardCapacity),
      device_allocations_(kGraveyardCapacity),
      host_allocations_(kGraveyardCapacity),
      execution_offsets_(device_count > 0 ? device_count : 0) {}

void ValidationTracker::DestroyAll() {
  absl::MutexLock lock(&mu_);
  streams_.DestroyAll();
  events_.DestroyAll();
  device_allocations_.DestroyAll();
  host_allocations_.DestroyAll();
}

absl::Status ValidationTracker::CheckDevice(int32_t device) const {
  absl::ReaderMutexLock lock(&mu_);
  if ((device >= 0 && device < device_count_)) {
    return absl::OkStatus();
  }
  return absl::OutOfRangeError(absl::StrFormat(
      "device %d does not exist: the driver has %d device%s, so valid indices "
      "are 0 to %d",
      device, device_count_, device_count_ == 1 ? "" : "s", device_count_ - 1));
}

absl::StatusOr<int32_t> ValidationTracker::LiveStream(
    openreg_stream stream, absl::string_view argument) const {
  absl::ReaderMutexLock lock(&mu_);
  if (const int32_t* device = streams_.FindLive(stream)) return *device;
  if (stream == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is NULL; pass a stream from stream_create (the ABI has no "
        "default stream)",
        argument));
  }
  if (const int32_t* device = streams_.FindDestroyed(stream)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s' %p (device %d) was destroyed by stream_destroy "
                        "or context_destroy earlier; a destroyed stream must "
                        "not be used again",
                        argument, stream, *device));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "'%s' %p is not a stream of this driver: stream_create never returned "
      "it",
      argument, stream));
}

absl::StatusOr<ValidationTracker::EventState> ValidationTracker::LiveEvent(
    openreg_event event, absl::string_view argument) const {
  absl::ReaderMutexLock lock(&mu_);
  if (const EventState* state = events_.FindLive(event)) return *state;
  if (event == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is NULL; pass an event from event_create", argument));
  }
  if (const EventState* state = events_.FindDestroyed(event)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' %p (device %d) was destroyed by event_destroy or context_destroy "
        "earlier; a destroyed event must not be used again",
        argument, event, state->device));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "'%s' %p is not an event of this driver: event_create never returned "
      "it",
      argument, event));
}

void ValidationTracker::AddStream(openreg_stream stream, int32_t device) {
  absl::MutexLock lock(&mu_);
  streams_.Add(stream, device);
}

absl::StatusOr<int32_t> ValidationTracker::TakeStream(openreg_stream stream) {
  if (absl::StatusOr<int32_t> live = LiveStream(stream, "stream");
      !live.ok()) {
    return live;
  }
  absl::MutexLock lock(&mu_);
  std::optional<int32_t> device = streams_.Destroy(stream);
  if (!device.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "stream %p was destroyed by another thread at the same time", stream));
  }
  return *device;
}

void ValidationTracker::ReturnStream(openreg_stream stream, int32_t device) {
  AddStream(stream, device);
}

void ValidationTracker::AddEvent(openreg_event event, int32_t device,
                                 uint32_t flags) {
  absl::MutexLock lock(&mu_);
  events_.Add(event, EventState{device, flags, false});
}

void ValidationTracker::MarkRecorded(openreg_event event) {
  absl::MutexLock lock(&mu_);
  if (const EventState* state = events_.FindLive(event)) {
    EventState recorded = *state;
    recorded.recorded = true;
    events_.Add(event, recorded);
  }
}

absl::StatusOr<ValidationTracker::EventState> ValidationTracker::TakeEvent(
    openreg_event event) {
  if (absl::StatusOr<EventState> live = LiveEvent(event, "event");
      !live.ok()) {
    return live;
  }
  absl::MutexLock lock(&mu_);
  std::optional<EventState> state = events_.Destroy(event);
  if (!state.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "event %p was destroyed by another thread at the same time", event));
  }
  return *state;
}

void ValidationTracker::ReturnEvent(openreg_event event,
                                    const EventState& state) {
  absl::MutexLock lock(&mu_);
  events_.Add(event, state);
}

void ValidationTracker::AddDeviceAllocation(const void* ptr, int32_t device,
                                            uint64_t size) {
  absl::MutexLock lock(&mu_);
  device_allocations_.Add(Address(ptr), Allocation{device, size});
}

void ValidationTracker::AddHostAllocation(const void* ptr, uint64_t size) {
  absl::MutexLock lock(&mu_);
  host_allocations_.Add(Address(ptr), Allocation{-1, size});
}

std::optional<ValidationTracker::Allocations::Entry>
ValidationTracker::ContainingLocked(const void* ptr) const {
  for (const Allocations* table : {&device_allocations_, &host_allocations_}) {
    std::optional<Allocations::Entry> entry =
        table->LiveAtOrBelow(Address(ptr));
    if (entry.has_value() &&
        Contains(entry->key, entry->info->size, Address(ptr))) {
      return entry;
    }
  }
  return std::nullopt;
}

absl::Status ValidationTracker::NotAnAllocationLocked(
    const void* ptr, absl::string_view allocator) const {
  if (std::optional<Allocations::Entry> live = ContainingLocked(ptr)) {
    if (live->key != Address(ptr)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "pointer %p lies %d bytes inside an allocation of %s at %#x; pass "
          "the pointer %s returned",
          ptr, Address(ptr) - live->key, Describe(*live->info), live->key,
          allocator));
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "pointer %p is %s; free it with %s", ptr, Describe(*live->info),
        live->info->device < 0 ? "host_free" : "device_free"));
  }
  for (const Allocations* table : {&device_allocations_, &host_allocations_}) {
    if (const Allocation* freed = table->FindDestroyed(Address(ptr))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "pointer %p (%s, %d bytes) was already freed, or released by "
          "context_destroy: this is a double free",
          ptr, Describe(*freed), freed->size));
    }
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "pointer %p was never returned by %s: only memory from %s may be freed "
      "here",
      ptr, allocator, allocator));
}

absl::StatusOr<ValidationTracker::Allocation>
ValidationTracker::TakeDeviceAllocation(int32_t device, const void* ptr) {
  if (absl::Status status = CheckDevice(device); !status.ok()) return status;
  absl::MutexLock lock(&mu_);
  const Allocation* live = device_allocations_.FindLive(Address(ptr));
  if (live == nullptr) return NotAnAllocationLocked(ptr, "device_malloc");
  if (live->device != device) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pointer %p was allocated on device %d, not on device %d; pass the "
        "device it was allocated on",
        ptr, live->device, device));
  }
  return *device_allocations_.Destroy(Address(ptr));
}

absl::StatusOr<ValidationTracker::Allocation>
ValidationTracker::TakeHostAllocation(const void* ptr) {
  absl::MutexLock lock(&mu_);
  if (host_allocations_.FindLive(Address(ptr)) == nullptr) {
    return NotAnAllocationLocked(ptr, "host_malloc");
  }
  return *host_allocations_.Destroy(Address(ptr));
}

void ValidationTracker::ReturnAllocation(const void* ptr,
                                         const Allocation& allocation) {
  absl::MutexLock lock(&mu_);
  (allocation.device < 0 ? host_allocations_ : device_allocations_)
      .Add(Address(ptr), allocation);
}

absl::Status ValidationTracker::CheckDeviceRange(
    const void* ptr, size_t size, absl::string_view argument) const {
  absl::ReaderMutexLock lock(&mu_);
  std::optional<Allocations::Entry> live = ContainingLocked(ptr);
  if (live.has_value() && live->info->device >= 0) {
    const uint64_t offset = Address(ptr) - live->key;
    if (size <= live->info->size - offset) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s': %d bytes from %p run %d bytes past the end of its allocation "
        "(%d bytes at %#x on device %d)",
        argument, size, ptr, size - (live->info->size - offset),
        live->info->size, live->key, live->info->device));
  }
  if (live.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' %p is pinned host memory, but device memory is expected here; "
        "use a copy kind whose side for '%s' is HOST",
        argument, ptr, argument));
  }
  if (absl::Status alias = NotAnExecutionAliasLocked(ptr, argument);
      !alias.ok()) {
    return alias;
  }
  std::optional<Allocations::Entry> freed =
      device_allocations_.DestroyedAtOrBelow(Address(ptr));
  if (freed.has_value() &&
      Contains(freed->key, freed->info->size, Address(ptr))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' %p points into device memory that was freed (the allocation at "
        "%#x on device %d): use after free",
        argument, ptr, freed->key, freed->info->device));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "'%s' %p is not device memory: expected a pointer into a live "
      "device_malloc allocation (host memory needs a copy kind whose side for "
      "'%s' is HOST)",
      argument, ptr, argument));
}

absl::Status ValidationTracker::CheckHostRange(
    const void* ptr, size_t size, absl::string_view argument) const {
  absl::ReaderMutexLock lock(&mu_);
  std::optional<Allocations::Entry> live = ContainingLocked(ptr);
  if (!live.has_value()) {
    // Pageable host memory, unless it is device memory seen through its
    // execution view.
    return NotAnExecutionAliasLocked(ptr, argument);
  }
  if (live->info->device >= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' %p is %s, but host memory is expected here; use a copy kind "
        "whose side for '%s' is DEVICE",
        argument, ptr, Describe(*live->info), argument));
  }
  const uint64_t offset = Address(ptr) - live->key;
  if (size <= live->info->size - offset) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "'%s': %d bytes from %p run %d bytes past the end of its pinned host "
      "allocation (%d bytes at %#x)",
      argument, size, ptr, size - (live->info->size - offset),
      live->info->size, live->key));
}

absl::Status ValidationTracker::RecordExecutionOffset(int32_t device,
                                                      intptr_t offset) {
  absl::MutexLock lock(&mu_);
  std::optional<intptr_t>& known = execution_offsets_[device];
  if (!known.has_value()) {
    known = offset;
    return absl::OkStatus();
  }
  if (*known == offset) return absl::OkStatus();
  return absl::InternalError(absl::StrFormat(
      "the driver reported execution offset %#x for device %d, but %#x "
      "before; the ABI requires a device's offset to stay constant for the "
      "life of the context, because the core caches it: fix the driver",
      offset, device, *known));
}

absl::Status ValidationTracker::NotAnExecutionAliasLocked(
    const void* ptr, absl::string_view argument) const {
  for (size_t device = 0; device < execution_offsets_.size(); ++device) {
    const std::optional<intptr_t>& offset = execution_offsets_[device];
    if (!offset.has_value() || *offset == 0) continue;
    const void* device_address =
        reinterpret_cast<const void*>(Address(ptr) - *offset);
    std::optional<Allocations::Entry> live = ContainingLocked(device_address);
    if (live.has_value() && live->info->device == static_cast<int>(device)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "'%s' %p is the execution view of device memory (the allocation at "
          "%#x on device %d, execution offset %#x); driver functions take the "
          "device address: pass %p",
          argument, ptr, live->key, device, *offset, device_address));
    }
  }
  return absl::OkStatus();
}

}  // namespace openreg
