// The C++ implementations behind each entry of the openreg_driver_api table,
// one per ABI function, with its ABI name and signature, declared by
// plugins/sim_support/driver_table.h (the shared ones are using-declarations
// of plugins/sim_support/shared_api.h). They are grouped into api_<section>.cc
// files following the sections of openreg_driver.h; cpu_sim_driver.cc
// generates the table from them.
//
// Thread-safety: every function may be called from any thread. Each finds
// its context's DriverState without a lock (see driver_state.h), and needs
// no lock of its own.
#ifndef OPENREG_PLUGINS_CPU_SIM_API_H_
#define OPENREG_PLUGINS_CPU_SIM_API_H_

#include "plugins/sim_support/driver_table.h"

namespace openreg::cpu_sim {

SIM_DECLARE_DRIVER_FUNCTIONS();

}  // namespace openreg::cpu_sim

#endif  // OPENREG_PLUGINS_CPU_SIM_API_H_
