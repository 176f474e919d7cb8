// Everything an initialized cpu_sim driver owns, and the process-wide slot
// that holds it between init and shutdown.
//
// Ownership: DriverState owns all device memory, pinned host memory, streams
// and events. The global slot holds it through a shared_ptr; every API call
// takes its own reference for the duration of the call, so shutdown (which
// empties the slot) never frees state under a call that is still running,
// and no lock is held while a launched host function runs.
// Thread-safety: DriverState's members are set at construction and never
// reassigned; each component has its own mutex. The global slot is guarded
// by a mutex in driver_state.cc.
#ifndef OPENREG_PLUGINS_CPU_SIM_DRIVER_STATE_H_
#define OPENREG_PLUGINS_CPU_SIM_DRIVER_STATE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "core/driver/openreg_driver.h"
#include "plugins/cpu_sim/config.h"
#include "plugins/cpu_sim/event.h"
#include "plugins/cpu_sim/stream.h"
#include "plugins/sim_support/allocation_table.h"
#include "plugins/sim_support/device_memory.h"
#include "plugins/sim_support/pinned_host_memory.h"
#include "plugins/sim_support/pointer_attributes.h"

namespace openreg::cpu_sim {

using sim::PointerInfo;

class DriverState {
 public:
  explicit DriverState(const DriverConfig& config);

  DriverState(const DriverState&) = delete;
  DriverState& operator=(const DriverState&) = delete;

  int32_t device_count() const {
    return static_cast<int32_t>(devices_.size());
  }
  uint64_t device_memory_bytes() const { return device_memory_bytes_; }

  // INVALID_DEVICE, with the valid range in the message, unless `device`
  // exists. `function` names the API call being served.
  openreg_status CheckDevice(int32_t device, const char* function) const;

  // Callers pass a device index that CheckDevice accepted.
  sim::DeviceMemory& device_memory(int32_t device) { return *devices_[device]; }
  sim::PinnedHostMemory& host_memory() { return host_memory_; }
  StreamTable& streams() { return streams_; }
  EventTable& events() { return events_; }

  // Where `ptr` points: into a device allocation, a pinned host allocation,
  // or neither.
  PointerInfo Classify(const void* ptr) const;

 private:
  const uint64_t device_memory_bytes_;
  std::vector<std::unique_ptr<sim::DeviceMemory>> devices_;
  sim::PinnedHostMemory host_memory_;
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
