
#include "plugins/cpu_sim/api.h"
#include "plugins/cpu_sim/driver_state.h"
#include "plugins/sim_support/context_registry.h"
#include "plugins/sim_support/error.h"

namespace openreg::cpu_sim {

openreg_status device_synchronize(openreg_context context, int32_t device) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "device_synchronize", &state));
  // All work already ran when it was enqueued; only the index needs checking.
  return state->CheckDevice(device, "device_synchronize");
}

}  // namespace openreg::cpu_sim
