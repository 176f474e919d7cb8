#include "plugins/cpu_sim/driver_state.h"

namespace openreg::cpu_sim {

DriverState::DriverState(const sim::SimConfig& config)
    : SimState(kDriverName, config.device_count, config.device_memory_bytes,
               kStreamPriorities, config.faults, config.retain_freed_bytes) {}

}  // namespace openreg::cpu_sim
