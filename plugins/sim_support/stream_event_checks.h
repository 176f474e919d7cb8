// The argument checks of stream and event calls, the same in both simulated
// drivers: what a driver accepts and how it says no are the ABI's, so they
// are written once; how each driver then runs the call is its own.
//
// Thread-safety: pure functions of their arguments (the state is only read
// for its constant device count, priorities and name).
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_STREAM_EVENT_CHECKS_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_STREAM_EVENT_CHECKS_H_

#include <cstdint>

#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/sim_state.h"

namespace openreg::sim {

// stream_create: INVALID_DEVICE for a device that does not exist,
// INVALID_ARGUMENT for a NULL `stream` or a priority outside the driver's
// range.
openreg_status CheckStreamCreate(const SimState& state, int32_t device,
                                 int32_t priority,
                                 const openreg_stream* stream);

// event_create: INVALID_DEVICE for a device that does not exist,
// INVALID_ARGUMENT for a NULL `event`, NOT_SUPPORTED for flag bits this ABI
// version does not define.
openreg_status CheckEventCreate(const SimState& state, int32_t device,
                                uint32_t flags, const openreg_event* event);

// event_elapsed_time: INVALID_ARGUMENT when `event` was created without
// OPENREG_EVENT_ENABLE_TIMING (`timing` false) or was never recorded.
// `role` is "start" or "end", the event's parameter name.
openreg_status CheckTimingEventRecorded(openreg_event event, bool timing,
                                        bool recorded, const char* role);

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_STREAM_EVENT_CHECKS_H_
