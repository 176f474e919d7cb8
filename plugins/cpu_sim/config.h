// Validation of the openreg_driver_config passed to context_create: the
// shared fields and fault_* options (plugins/sim_support/config.h) and
// cpu_sim's own options, of which there are none, so the parsed config is
// sim::SimConfig itself.
// Thread-safety: a pure function.
#ifndef OPENREG_PLUGINS_CPU_SIM_CONFIG_H_
#define OPENREG_PLUGINS_CPU_SIM_CONFIG_H_

#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/config.h"

namespace openreg::cpu_sim {

// sim::ParseConfig, and INVALID_ARGUMENT for any option but the fault_*
// ones: cpu_sim has none of its own.
openreg_status ParseConfig(const openreg_driver_config* config,
                           sim::SimConfig* out);

}  // namespace openreg::cpu_sim

#endif  // OPENREG_PLUGINS_CPU_SIM_CONFIG_H_
