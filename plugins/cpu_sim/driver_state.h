// Everything an initialized cpu_sim driver owns, and the process-wide slot
// that holds it between init and shutdown.
//
// Ownership: DriverState owns all device memory, pinned host memory (through
// sim::SimState), streams and events. The global slot holds it through a
// shared_ptr; every API call takes its own reference for the duration of the call, so shutdown (which
// empties the slot) never frees state under a call that is still running,
// and no lock is held while a launched host function runs.
// Thread-safety: DriverState's members are set at construction and never
// reassigned; each component has its own mutex. The global slot is guarded
// by a mutex in driver_state.cc.
#ifndef OPENREG_PLUGINS_CPU_SIM_DRIVER_STATE_H_
#define OPENREG_PLUGINS_CPU_SIM_DRIVER_STATE_H_

#include <cstdint>
#include <memory>

#include "driver_abi/openreg_driver.h"
#include "plugins/cpu_sim/event.h"
#include "plugins/cpu_sim/stream.h"
#include "plugins/sim_support/config.h"
#include "plugins/sim_support/sim_state.h"

namespace openreg::cpu_sim {

// Work runs synchronously on the calling thread, one item at a time.
inline constexpr int32_t kConcurrentStreams = 1;
inline constexpr sim::StreamPriorityRange kStreamPriorities = {
    /*least=*/0, /*greatest=*/-1};

class DriverState final : public sim::SimState {
 public:
  explicit DriverState(const sim::SimConfig& config);

  int32_t concurrent_streams(int32_t device) const override {
    return kConcurrentStreams;
  }

  StreamTable& streams() { return streams_; }
  EventTable& events() { return events_; }

 private:
  StreamTable streams_;
  EventTable events_;
};

// init: makes `state` current. INVALID_ARGUMENT if the driver is already
// initialized.
openreg_status InstallState(std::shared_ptr<DriverState> state);

// shutdown: empties the slot and returns what it held (null when the driver
// was not initialized); the state is freed when the last reference drops.
std::shared_ptr<DriverState> ReleaseState();

// The current state, or null after failing with NOT_INITIALIZED with a
// message naming `function`.
std::shared_ptr<DriverState> AcquireState(const char* function);

}  // namespace openreg::cpu_sim

#endif  // OPENREG_PLUGINS_CPU_SIM_DRIVER_STATE_H_
