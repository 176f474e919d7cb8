#include "plugins/threaded_sim/config.h"

#include "plugins/sim_support/error.h"

namespace openreg::threaded_sim {

openreg_status ParseConfig(const openreg_driver_config* config,
                           ThreadedSimConfig* out) {
  *out = ThreadedSimConfig{};
  SIM_RETURN_IF_ERROR(sim::ParseConfig(config, &out->shared));
  return ParseOptions(out->shared.options.c_str(), &out->options);
}

}  // namespace openreg::threaded_sim
