
#include "plugins/sim_support/context_registry.h"
#include "plugins/sim_support/error.h"
#include "plugins/threaded_sim/api.h"
#include "plugins/threaded_sim/driver_state.h"

namespace openreg::threaded_sim {

openreg_status device_synchronize(openreg_context context, int32_t device) {
  constexpr const char* kFunction = "device_synchronize";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, kFunction));
  return state->device(device).Synchronize(kFunction);
}

}  // namespace openreg::threaded_sim
