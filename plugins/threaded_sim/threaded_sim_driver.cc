// The only exported symbol of libopenreg_threaded_sim.so: the ABI entry point
// and the static function table it hands out. The library is built with
// -fvisibility=hidden and a version script, so nothing else leaks into the
// core's symbol space.
#include "plugins/threaded_sim/api.h"
#include "plugins/sim_support/driver_table.h"

// The name is also the prefix of every error message (sim::DriverName()).
SIM_DEFINE_DRIVER(openreg::threaded_sim, "threaded_sim", "1.1.0")
