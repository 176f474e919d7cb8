// Everything an initialized threaded_sim driver owns.
//
// Ownership: DriverState owns the devices (slots, streams), the handle
// registries and, through sim::SimState, device and pinned host memory. The
// process-wide slot in global_state.h holds it between init and shutdown; every API call takes its
// own reference for the duration of the call.
// Thread-safety: members are set at construction and never reassigned; each
// component has its own mutex. Stop() is for shutdown and process exit only.
#ifndef OPENREG_PLUGINS_THREADED_SIM_DRIVER_STATE_H_
#define OPENREG_PLUGINS_THREADED_SIM_DRIVER_STATE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/handle_registry.h"
#include "plugins/sim_support/sim_state.h"
#include "plugins/threaded_sim/config.h"
#include "plugins/threaded_sim/device.h"
#include "plugins/threaded_sim/event.h"
#include "plugins/threaded_sim/stream.h"

namespace openreg::threaded_sim {

// How long shutdown (and process exit) waits for a worker to finish the item
// it is running before leaving it running and keeping the state alive.
inline constexpr absl::Duration kWorkerJoinTimeout = absl::Seconds(5);

// Priorities decide the order in which streams get execution slots.
inline constexpr sim::StreamPriorityRange kStreamPriorities = {
    /*least=*/0, /*greatest=*/-2};

class DriverState final : public sim::SimState {
 public:
  explicit DriverState(const DriverConfig& config);

  int32_t concurrent_streams(int32_t device) const override {
    return devices_[device]->execution_slots();
  }

  // Callers pass a device index that CheckDevice accepted.
  Device& device(int32_t index) { return *devices_[index]; }
  sim::HandleRegistry<openreg_stream, std::shared_ptr<Stream>>& streams() {
    return streams_;
  }
  sim::HandleRegistry<openreg_event, std::shared_ptr<Event>>& events() {
    return events_;
  }

  // The object of a live handle, else INVALID_ARGUMENT naming `function`.
  openreg_status FindStream(openreg_stream handle, const char* function,
                            std::shared_ptr<Stream>* stream) const;
  openreg_status FindEvent(openreg_event handle, const char* function,
                           std::shared_ptr<Event>* event) const;

  // Shutdown and process exit: drops all queued work and joins the workers,
  // waiting at most `timeout` for running items. Returns false when some
  // worker is still running an item; the state must then never be destroyed,
  // since that item may still use device memory.
  bool Stop(absl::Duration timeout);

 private:
  std::vector<std::unique_ptr<Device>> devices_;
  // Handles own references to their objects: a lookup returns its own, so an
  // object outlives its handle while a call or queued work still uses it.
  sim::HandleRegistry<openreg_stream, std::shared_ptr<Stream>> streams_;
  sim::HandleRegistry<openreg_event, std::shared_ptr<Event>> events_;
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_DRIVER_STATE_H_
