#include <chrono>
#include <memory>

#include "absl/strings/str_format.h"
#include "plugins/sim_support/context_registry.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/handle_registry.h"
#include "plugins/sim_support/stream_event_checks.h"
#include "plugins/threaded_sim/api.h"
#include "plugins/threaded_sim/driver_state.h"
#include "plugins/threaded_sim/event.h"
#include "plugins/threaded_sim/stream.h"
#include "plugins/threaded_sim/work_item.h"

namespace openreg::threaded_sim {

using sim::Fail;
using sim::RequireNonNull;

namespace {

// Why `event` cannot be used for timing: INVALID_ARGUMENT for a non-timing
// or never recorded event, NOT_READY while its latest record has not
// completed. `role` is "start" or "end", its parameter name.
openreg_status CheckTimeable(const Event& event, const Event::LatestRecord& latest,
                             const char* role) {
  SIM_RETURN_IF_ERROR(sim::CheckTimingEventRecorded(
      event.handle(), event.timing(), /*recorded=*/latest.version != 0, role));
  if (latest.complete && !latest.completed_at.has_value()) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("event_elapsed_time: the latest event_record "
                                "of %s event %p failed, so it has no "
                                "timestamp; record it again",
                                role, event.handle()));
  }
  return OPENREG_SUCCESS;
}

}  // namespace

openreg_status event_create(openreg_context context, int32_t device,
                            uint32_t flags, openreg_event* event) {
  constexpr const char* kFunction = "event_create";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  SIM_RETURN_IF_ERROR(sim::CheckEventCreate(*state, device, flags, event));
  const openreg_event handle = sim::NewHandle<openreg_event>();
  state->events().Insert(handle,
                         std::make_shared<Event>(handle, device, flags));
  *event = handle;
  return OPENREG_SUCCESS;
}

openreg_status event_destroy(openreg_context context, openreg_event event) {
  constexpr const char* kFunction = "event_destroy";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  // Queued markers and waits keep their own reference to the event.
  if (!state->events().Remove(event).has_value()) {
    return sim::NotLiveEvent(event, kFunction);
  }
  return OPENREG_SUCCESS;
}

openreg_status event_record(openreg_context context, openreg_event event,
                            openreg_stream stream) {
  constexpr const char* kFunction = "event_record";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  std::shared_ptr<Stream> target;
  SIM_RETURN_IF_ERROR(state->FindStream(stream, kFunction, &target));
  std::shared_ptr<Event> recorded;
  SIM_RETURN_IF_ERROR(state->FindEvent(event, kFunction, &recorded));
  if (recorded->device() != target->device()) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: event %p belongs to device %d but the "
                                "stream belongs to device %d; record an event "
                                "on a stream of its own device",
                                kFunction, event, recorded->device(),
                                target->device()));
  }
  SIM_RETURN_IF_ERROR(
      state->InjectFault(sim::FaultPoint::kEventRecord, kFunction));
  // See Note [Event versions].
  const uint64_t version = recorded->BeginRecord();
  const openreg_status status = target->Enqueue(
      WorkItem::EventMarker(recorded, version), kFunction, nullptr);
  if (status != OPENREG_SUCCESS) recorded->AbandonRecord(version);
  return status;
}

openreg_status event_query(openreg_context context, openreg_event event) {
  constexpr const char* kFunction = "event_query";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  std::shared_ptr<Event> queried;
  SIM_RETURN_IF_ERROR(state->FindEvent(event, kFunction, &queried));
  return queried->IsComplete(queried->LatestVersion())
             ? OPENREG_SUCCESS
             : OPENREG_ERROR_NOT_READY;
}

openreg_status event_synchronize(openreg_context context, openreg_event event) {
  constexpr const char* kFunction = "event_synchronize";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  std::shared_ptr<Event> awaited;
  SIM_RETURN_IF_ERROR(state->FindEvent(event, kFunction, &awaited));
  if (!awaited->AwaitVersion(awaited->LatestVersion())) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: the context was stopped (the process is "
                                "exiting, or it was destroyed) before the "
                                "latest record of event %p completed",
                                kFunction, event));
  }
  return OPENREG_SUCCESS;
}

openreg_status event_elapsed_time(openreg_context context, openreg_event start,
                                  openreg_event end, float* milliseconds) {
  constexpr const char* kFunction = "event_elapsed_time";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  SIM_RETURN_IF_ERROR(
      RequireNonNull(milliseconds, kFunction, "milliseconds"));
  std::shared_ptr<Event> start_event;
  std::shared_ptr<Event> end_event;
  SIM_RETURN_IF_ERROR(state->FindEvent(start, kFunction, &start_event));
  SIM_RETURN_IF_ERROR(state->FindEvent(end, kFunction, &end_event));
  const Event::LatestRecord start_record = start_event->Latest();
  const Event::LatestRecord end_record = end_event->Latest();
  SIM_RETURN_IF_ERROR(
      CheckTimeable(*start_event, start_record, "start"));
  SIM_RETURN_IF_ERROR(CheckTimeable(*end_event, end_record, "end"));
  if (!start_record.complete || !end_record.complete) {
    return Fail(OPENREG_ERROR_NOT_READY,
                absl::StrFormat("%s: the latest record of the %s event has "
                                "not completed yet; synchronize it first",
                                kFunction,
                                start_record.complete ? "end" : "start"));
  }
  *milliseconds = std::chrono::duration<float, std::milli>(
                      *end_record.completed_at - *start_record.completed_at)
                      .count();
  return OPENREG_SUCCESS;
}

}  // namespace openreg::threaded_sim
