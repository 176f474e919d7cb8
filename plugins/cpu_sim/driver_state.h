// Everything one cpu_sim context owns: what context_create makes and every
// other function gets, through the context registry
// (plugins/sim_support/context_registry.h).
//
// Ownership: DriverState owns all device memory, pinned host memory (through
// sim::SimState), streams and events of its context. The registry holds it
// through a shared_ptr while the context lives; an API call uses it through
// the registry's raw pointer, without a lock or a reference count: the ABI
// lets no call on a context run concurrently with its context_destroy, so
// the state outlives every call, and no lock is held while a launched host
// function runs.
// Thread-safety: DriverState's members are set at construction and never
// reassigned; each component has its own mutex.
#ifndef OPENREG_PLUGINS_CPU_SIM_DRIVER_STATE_H_
#define OPENREG_PLUGINS_CPU_SIM_DRIVER_STATE_H_

#include <cstdint>

#include "driver_abi/openreg_driver.h"
#include "plugins/cpu_sim/event.h"
#include "plugins/cpu_sim/stream.h"
#include "plugins/sim_support/config.h"
#include "plugins/sim_support/sim_state.h"

namespace openreg::cpu_sim {

// The table's driver_name, the prefix of every error message and part of
// every device's name.
inline constexpr char kDriverName[] = "cpu_sim";

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

}  // namespace openreg::cpu_sim

#endif  // OPENREG_PLUGINS_CPU_SIM_DRIVER_STATE_H_
