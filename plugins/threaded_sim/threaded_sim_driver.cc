// The only exported symbol of libopenreg_threaded_sim.so: the ABI entry point
// and the static function table it hands out, generated from the ABI's
// function list (see plugins/sim_support/driver_table.h). The library is
// built with -fvisibility=hidden and a version script, so nothing else leaks
// into the core's symbol space.
#include "plugins/sim_support/driver_table.h"
#include "plugins/threaded_sim/api.h"
#include "plugins/threaded_sim/driver_state.h"

SIM_DEFINE_DRIVER(openreg::threaded_sim, "2.0.0")
