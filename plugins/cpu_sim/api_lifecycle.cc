#include <memory>

#include "plugins/cpu_sim/api.h"
#include "plugins/cpu_sim/config.h"
#include "plugins/cpu_sim/driver_state.h"
#include "plugins/sim_support/error.h"

namespace openreg::cpu_sim {

using sim::Fail;

openreg_status Init(const openreg_driver_config* config) {
  sim::SimConfig parsed;
  SIM_RETURN_IF_ERROR(ParseDriverConfig(config, &parsed));
  return InstallState(std::make_shared<DriverState>(parsed));
}

openreg_status Shutdown() {
  // Dropping the last reference frees every allocation, stream and event.
  if (ReleaseState() == nullptr) {
    return Fail(OPENREG_ERROR_NOT_INITIALIZED,
                "shutdown: the driver is not initialized; shutdown must "
                "follow a successful init");
  }
  return OPENREG_SUCCESS;
}

}  // namespace openreg::cpu_sim
