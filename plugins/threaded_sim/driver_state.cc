#include "plugins/threaded_sim/driver_state.h"

#include <optional>
#include <utility>

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"

namespace openreg::threaded_sim {

using sim::Allocation;

using sim::Fail;

DriverState::DriverState(const DriverConfig& config)
    : device_memory_bytes_(config.device_memory_bytes) {
  devices_.reserve(config.device_count);
  for (int32_t device = 0; device < config.device_count; ++device) {
    devices_.push_back(std::make_unique<Device>(
        device, config.device_memory_bytes, config.options));
  }
}

openreg_status DriverState::CheckDevice(int32_t device,
                                        const char* function) const {
  if (device >= 0 && device < device_count()) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_INVALID_DEVICE,
              absl::StrFormat("%s: device %d does not exist; valid devices are "
                              "0 to %d (device_count is %d)",
                              function, device, device_count() - 1,
                              device_count()));
}

openreg_status DriverState::NotLiveStream(openreg_stream handle,
                                          const char* function) {
  if (handle == nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: stream is NULL; the driver ABI has no "
                                "default stream, create one with "
                                "stream_create",
                                function));
  }
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("%s: stream %p is not a live stream; it was "
                              "destroyed, never created, or created before "
                              "the last shutdown",
                              function, handle));
}

openreg_status DriverState::NotLiveEvent(openreg_event handle,
                                         const char* function) {
  if (handle == nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: event is NULL; create one with "
                                "event_create",
                                function));
  }
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("%s: event %p is not a live event; it was "
                              "destroyed, never created, or created before "
                              "the last shutdown",
                              function, handle));
}

openreg_status DriverState::FindStream(openreg_stream handle,
                                       const char* function,
                                       std::shared_ptr<Stream>* stream) const {
  *stream = streams_.Find(handle);
  if (*stream == nullptr) return NotLiveStream(handle, function);
  return OPENREG_SUCCESS;
}

openreg_status DriverState::FindEvent(openreg_event handle,
                                      const char* function,
                                      std::shared_ptr<Event>* event) const {
  *event = events_.Find(handle);
  if (*event == nullptr) return NotLiveEvent(handle, function);
  return OPENREG_SUCCESS;
}

PointerInfo DriverState::Classify(const void* ptr) const {
  for (const std::unique_ptr<Device>& device : devices_) {
    if (std::optional<Allocation> found = device->memory().Find(ptr)) {
      return PointerInfo{OPENREG_MEMORY_TYPE_DEVICE, device->index(), *found};
    }
  }
  if (std::optional<Allocation> found = pinned_memory_.Find(ptr)) {
    return PointerInfo{OPENREG_MEMORY_TYPE_HOST, -1, *found};
  }
  return PointerInfo{};
}

bool DriverState::Stop(absl::Duration timeout) {
  // Every stream stops taking items before any wait is cancelled, so no
  // worker gets past a cancelled wait into work that shutdown drops.
  std::vector<std::shared_ptr<Event>> orphaned_events;
  for (const std::unique_ptr<Device>& device : devices_) {
    for (std::shared_ptr<Event>& event : device->Stop()) {
      orphaned_events.push_back(std::move(event));
    }
  }
  for (const std::shared_ptr<Event>& event : orphaned_events) event->Cancel();
  const absl::Time deadline = absl::Now() + timeout;
  bool all_joined = true;
  for (const std::unique_ptr<Device>& device : devices_) {
    all_joined = device->Join(deadline) && all_joined;
  }
  return all_joined;
}

}  // namespace openreg::threaded_sim
