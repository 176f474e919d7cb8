#include <memory>

#include "plugins/cpu_sim/api.h"
#include "plugins/cpu_sim/config.h"
#include "plugins/cpu_sim/driver_state.h"
#include "plugins/sim_support/context_registry.h"
#include "plugins/sim_support/error.h"

namespace openreg::cpu_sim {

openreg_status context_create(const openreg_driver_config* config,
                              openreg_context* context) {
  SIM_RETURN_IF_ERROR(
      sim::RequireNonNull(context, "context_create", "context"));
  sim::SimConfig parsed;
  SIM_RETURN_IF_ERROR(cpu_sim::ParseConfig(config, &parsed));
  *context = sim::RegisterContext(std::make_shared<DriverState>(parsed));
  return OPENREG_SUCCESS;
}

openreg_status context_destroy(openreg_context context) {
  std::shared_ptr<sim::SimState> state;
  SIM_RETURN_IF_ERROR(
      sim::UnregisterContext(context, "context_destroy", &state));
  // Dropping the last reference frees every allocation, stream and event.
  return OPENREG_SUCCESS;
}

}  // namespace openreg::cpu_sim
