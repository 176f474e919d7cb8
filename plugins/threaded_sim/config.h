// Validation of the openreg_driver_config passed to context_create: the
// shared fields (plugins/sim_support/config.h) and threaded_sim's options
// (options.h).
// Thread-safety: a pure function.
#ifndef OPENREG_PLUGINS_THREADED_SIM_CONFIG_H_
#define OPENREG_PLUGINS_THREADED_SIM_CONFIG_H_

#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/config.h"
#include "plugins/threaded_sim/options.h"

namespace openreg::threaded_sim {

struct ThreadedSimConfig {
  sim::SimConfig shared;
  DriverOptions options = DefaultOptions();
};

// sim::ParseConfig, and INVALID_ARGUMENT for a bad option.
openreg_status ParseConfig(const openreg_driver_config* config,
                           ThreadedSimConfig* out);

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_CONFIG_H_
