#include <memory>

#include "plugins/threaded_sim/api.h"
#include "plugins/threaded_sim/config.h"
#include "plugins/threaded_sim/driver_state.h"
#include "plugins/sim_support/error.h"
#include "plugins/threaded_sim/global_state.h"

namespace openreg::threaded_sim {

using sim::Fail;

openreg_status Init(const openreg_driver_config* config) {
  DriverConfig parsed;
  SIM_RETURN_IF_ERROR(ParseConfig(config, &parsed));
  return InstallState(std::make_shared<DriverState>(parsed));
}

openreg_status Shutdown() {
  std::shared_ptr<DriverState> state = ReleaseState();
  if (state == nullptr) {
    return Fail(OPENREG_ERROR_NOT_INITIALIZED,
                "shutdown: the driver is not initialized; shutdown must "
                "follow a successful init");
  }
  // Queued work is dropped and workers joined. A worker still inside a host
  // function after kWorkerJoinTimeout is left running, with the memory it
  // may use; otherwise dropping the last reference frees everything.
  if (!state->Stop(kWorkerJoinTimeout)) AbandonState(std::move(state));
  return OPENREG_SUCCESS;
}

}  // namespace openreg::threaded_sim
