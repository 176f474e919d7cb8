
#include "absl/strings/str_format.h"
#include "plugins/cpu_sim/api.h"
#include "plugins/cpu_sim/driver_state.h"
#include "plugins/sim_support/activity_recorder.h"
#include "plugins/sim_support/context_registry.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/stream_event_checks.h"

namespace openreg::cpu_sim {

using sim::Fail;
using sim::RequireNonNull;

using sim::StatusName;

openreg_status stream_create(openreg_context context, int32_t device,
                             int32_t priority, openreg_stream* stream) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "stream_create", &state));
  SIM_RETURN_IF_ERROR(sim::CheckStreamCreate(*state, device, priority, stream));
  return state->streams().Create(device, priority, stream);
}

openreg_status stream_destroy(openreg_context context, openreg_stream stream) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "stream_destroy", &state));
  return state->streams().Destroy(stream);
}

// Work on a cpu_sim stream has always finished by the time the call that
// enqueued it returns, so query and synchronize only validate the handle.
openreg_status stream_query(openreg_context context, openreg_stream stream) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "stream_query", &state));
  return state->streams().CheckLive(stream, "stream_query");
}

openreg_status stream_synchronize(openreg_context context,
                                  openreg_stream stream) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "stream_synchronize", &state));
  return state->streams().CheckLive(stream, "stream_synchronize");
}

openreg_status stream_wait_event(openreg_context context, openreg_stream stream,
                                 openreg_event event) {
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, "stream_wait_event", &state));
  StreamInfo info;
  SIM_RETURN_IF_ERROR(
      state->streams().Lookup(stream, "stream_wait_event", &info));
  // Every record has already completed, so there is nothing to wait for: the
  // wait's activity record has no duration.
  SIM_RETURN_IF_ERROR(state->events().CheckLive(event, "stream_wait_event"));
  sim::ScopedActivity recorded(
      &state->activity(), state->activity().Tag(),
      sim::ActivityItem{OPENREG_ACTIVITY_EVENT_WAIT, info.device, stream});
  return OPENREG_SUCCESS;
}

openreg_status stream_get_priority(openreg_context context,
                                   openreg_stream stream, int32_t* priority) {
  constexpr const char* kFunction = "stream_get_priority";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  StreamInfo info;
  SIM_RETURN_IF_ERROR(state->streams().Lookup(stream, kFunction, &info));
  SIM_RETURN_IF_ERROR(RequireNonNull(priority, kFunction, "priority"));
  *priority = info.priority;
  return OPENREG_SUCCESS;
}

// The ABI makes a failing host function sticky on its stream because an
// asynchronous driver learns of the failure only after launch_host_func has
// returned. cpu_sim runs the function inline, so it reports the failure from
// the launch itself and the stream stays clean: a later stream_query or
// stream_synchronize returns SUCCESS.
openreg_status launch_host_func(openreg_context context, openreg_stream stream,
                                openreg_host_fn fn, void* user_data) {
  constexpr const char* kFunction = "launch_host_func";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  StreamInfo info;
  SIM_RETURN_IF_ERROR(state->streams().Lookup(stream, kFunction, &info));
  SIM_RETURN_IF_ERROR(sim::RequireHostFunction(fn, kFunction));
  // An injected fault refuses the launch: `fn` never runs.
  SIM_RETURN_IF_ERROR(
      state->InjectFault(sim::FaultPoint::kLaunchHostFunc, kFunction));
  const sim::ActivityTag tag = state->activity().Tag();
  openreg_status result;
  {
    absl::MutexLock in_stream_order(info.execution);
    sim::ScopedActivity recorded(
        &state->activity(), tag,
        sim::ActivityItem{OPENREG_ACTIVITY_HOST_FUNCTION, info.device, stream});
    result = fn(user_data);
  }
  if (result != OPENREG_SUCCESS) {
    return Fail(OPENREG_ERROR_LAUNCH_FAILURE,
                absl::StrFormat("%s: the host function launched on stream %p "
                                "returned status %d (%s)",
                                kFunction, stream, result,
                                StatusName(result)));
  }
  return OPENREG_SUCCESS;
}

}  // namespace openreg::cpu_sim
