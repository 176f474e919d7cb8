
#include "plugins/cpu_sim/api.h"
#include "plugins/cpu_sim/driver_state.h"
#include "plugins/cpu_sim/stream.h"
#include "plugins/sim_support/activity_recorder.h"
#include "plugins/sim_support/context_registry.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/stream_event_checks.h"

namespace openreg::cpu_sim {

using sim::RequireNonNull;

openreg_status event_create(openreg_context context, int32_t device,
                            uint32_t flags, openreg_event* event) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "event_create", &state));
  SIM_RETURN_IF_ERROR(sim::CheckEventCreate(*state, device, flags, event));
  return state->events().Create(device, flags, event);
}

openreg_status event_destroy(openreg_context context, openreg_event event) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "event_destroy", &state));
  return state->events().Destroy(event);
}

openreg_status event_record(openreg_context context, openreg_event event,
                            openreg_stream stream) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "event_record", &state));
  StreamInfo stream_info;
  if (openreg_status s =
          state->streams().Lookup(stream, "event_record", &stream_info);
      s != OPENREG_SUCCESS) {
    return s;
  }
  if (state->faults() != nullptr) {
    // Faults are injected into calls that would otherwise succeed: a bad
    // event still gets the error that says so. The extra lookup is paid only
    // with fault options.
    EventInfo info;
    SIM_RETURN_IF_ERROR(state->events().Lookup(event, "event_record", &info));
    if (info.device == stream_info.device) {
      SIM_RETURN_IF_ERROR(
          state->InjectFault(sim::FaultPoint::kEventRecord, "event_record"));
    }
  }
  // The marker completes as it is recorded: its activity record has no
  // duration.
  const sim::ActivityTag tag = state->activity().Tag();
  SIM_RETURN_IF_ERROR(state->events().Record(event, stream_info.device));
  sim::ScopedActivity recorded(&state->activity(), tag,
                               sim::ActivityItem{OPENREG_ACTIVITY_EVENT_RECORD,
                                                 stream_info.device, stream});
  return OPENREG_SUCCESS;
}

// Records complete as they are made (see event.h), so query and synchronize
// only validate the handle.
openreg_status event_query(openreg_context context, openreg_event event) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "event_query", &state));
  return state->events().CheckLive(event, "event_query");
}

openreg_status event_synchronize(openreg_context context, openreg_event event) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "event_synchronize", &state));
  return state->events().CheckLive(event, "event_synchronize");
}

openreg_status event_elapsed_time(openreg_context context, openreg_event start,
                                  openreg_event end, float* milliseconds) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "event_elapsed_time", &state));
  if (openreg_status s =
          RequireNonNull(milliseconds, "event_elapsed_time", "milliseconds");
      s != OPENREG_SUCCESS) {
    return s;
  }
  return state->events().ElapsedMilliseconds(start, end, milliseconds);
}

}  // namespace openreg::cpu_sim
