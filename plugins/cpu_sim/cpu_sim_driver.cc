// The only exported symbol of libopenreg_cpu_sim.so: the ABI entry point and
// the static function table it hands out. The library is built with
// -fvisibility=hidden so nothing else leaks into the core's symbol space.
#include "plugins/cpu_sim/api.h"
#include "plugins/sim_support/driver_table.h"

// The name is also the prefix of every error message (sim::DriverName()).
SIM_DEFINE_DRIVER(openreg::cpu_sim, "cpu_sim", "1.1.0")
