// The only exported symbol of libopenreg_cpu_sim.so: the ABI entry point and
// the static function table it hands out, generated from the ABI's function
// list (see plugins/sim_support/driver_table.h). The library is built with
// -fvisibility=hidden and a version script, so nothing else leaks into the
// core's symbol space.
#include "plugins/cpu_sim/api.h"
#include "plugins/cpu_sim/driver_state.h"
#include "plugins/sim_support/driver_table.h"

SIM_DEFINE_DRIVER(openreg::cpu_sim, "2.0.0")
