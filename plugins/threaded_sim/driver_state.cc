#include "plugins/threaded_sim/driver_state.h"

#include <utility>

namespace openreg::threaded_sim {

DriverState::DriverState(const ThreadedSimConfig& config)
    : SimState(kDriverName, config.shared.device_count,
               config.shared.device_memory_bytes, kStreamPriorities,
               config.shared.faults, config.shared.retain_freed_bytes) {
  devices_.reserve(config.shared.device_count);
  for (int32_t device = 0; device < config.shared.device_count; ++device) {
    devices_.push_back(
        std::make_unique<Device>(device, config.options, &activity()));
  }
}

openreg_status DriverState::FindStream(openreg_stream handle,
                                       const char* function,
                                       std::shared_ptr<Stream>* stream) const {
  *stream = streams_.Find(handle).value_or(nullptr);
  if (*stream == nullptr) return sim::NotLiveStream(handle, function);
  return OPENREG_SUCCESS;
}

openreg_status DriverState::FindEvent(openreg_event handle,
                                      const char* function,
                                      std::shared_ptr<Event>* event) const {
  *event = events_.Find(handle).value_or(nullptr);
  if (*event == nullptr) return sim::NotLiveEvent(handle, function);
  return OPENREG_SUCCESS;
}

void DriverState::Stop() {
  // Every stream stops taking items before any wait is cancelled, so no
  // worker gets past a cancelled wait into work that Stop drops.
  std::vector<std::shared_ptr<Event>> orphaned_events;
  for (const std::unique_ptr<Device>& device : devices_) {
    for (std::shared_ptr<Event>& event : device->Stop()) {
      orphaned_events.push_back(std::move(event));
    }
  }
  for (const std::shared_ptr<Event>& event : orphaned_events) event->Cancel();
}

bool DriverState::Join(absl::Time deadline) {
  bool all_joined = true;
  for (const std::unique_ptr<Device>& device : devices_) {
    all_joined = device->Join(deadline) && all_joined;
  }
  return all_joined;
}

}  // namespace openreg::threaded_sim
