// Everything one threaded_sim context owns: what context_create makes and
// every other function gets, through the context registry
// (plugins/sim_support/context_registry.h). Contexts share nothing: each has
// its own devices, execution slots, streams and worker threads.
//
// Ownership: DriverState owns the devices (slots, streams), the handle
// registries and, through sim::SimState, device and pinned host memory. The
// registry holds it while the context lives; an API call uses it through the
// registry's raw pointer, which the ABI keeps valid (no call on a context runs
// concurrently with its context_destroy, and context_destroy frees the state
// only after joining every worker, else keeps it until exit).
// Thread-safety: members are set at construction and never reassigned; each
// component has its own mutex. Stop() and Join() are for context_destroy and
// process exit only.
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

// The table's driver_name, the prefix of every error message and part of
// every device's name.
inline constexpr char kDriverName[] = "threaded_sim";

// How long context_destroy (and process exit) waits for a worker to finish
// the item it is running before leaving it running and keeping the state
// alive.
inline constexpr absl::Duration kWorkerJoinTimeout = absl::Seconds(5);

// Priorities decide the order in which streams get execution slots.
inline constexpr sim::StreamPriorityRange kStreamPriorities = {
    /*least=*/0, /*greatest=*/-2};

class DriverState final : public sim::SimState {
 public:
  explicit DriverState(const ThreadedSimConfig& config);

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

  // context_destroy and process exit: drops all queued work and wakes every
  // waiting worker; later work is refused. Items that are running finish.
  void Stop();
  // After Stop(): joins the workers, waiting until `deadline` for running
  // items. Returns false when some worker is still running an item; the
  // state must then never be destroyed, since that item may still use device
  // memory.
  bool Join(absl::Time deadline);

 private:
  std::vector<std::unique_ptr<Device>> devices_;
  // Handles own references to their objects: a lookup returns its own, so an
  // object outlives its handle while a call or queued work still uses it.
  sim::HandleRegistry<openreg_stream, std::shared_ptr<Stream>> streams_;
  sim::HandleRegistry<openreg_event, std::shared_ptr<Event>> events_;
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_DRIVER_STATE_H_
