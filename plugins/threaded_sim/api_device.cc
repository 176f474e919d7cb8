#include <memory>

#include "plugins/sim_support/error.h"
#include "plugins/threaded_sim/api.h"
#include "plugins/threaded_sim/driver_state.h"
#include "plugins/threaded_sim/global_state.h"

namespace openreg::threaded_sim {

openreg_status DeviceSynchronize(int32_t device) {
  constexpr const char* kFunction = "device_synchronize";
  std::shared_ptr<DriverState> state = AcquireState(kFunction);
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, kFunction));
  return state->device(device).Synchronize(kFunction);
}

}  // namespace openreg::threaded_sim
