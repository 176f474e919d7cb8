#include <memory>

#include "plugins/cpu_sim/api.h"
#include "plugins/cpu_sim/driver_state.h"

namespace openreg::cpu_sim {

openreg_status DeviceSynchronize(int32_t device) {
  std::shared_ptr<DriverState> state = AcquireState("device_synchronize");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  // All work already ran when it was enqueued; only the index needs checking.
  return state->CheckDevice(device, "device_synchronize");
}

}  // namespace openreg::cpu_sim
