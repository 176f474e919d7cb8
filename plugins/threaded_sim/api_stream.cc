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


using sim::RequireNonNull;

openreg_status stream_create(openreg_context context, int32_t device,
                             int32_t priority, openreg_stream* stream) {
  constexpr const char* kFunction = "stream_create";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  SIM_RETURN_IF_ERROR(sim::CheckStreamCreate(*state, device, priority, stream));
  const openreg_stream handle = sim::NewHandle<openreg_stream>();
  state->streams().Insert(handle,
                          state->device(device).CreateStream(handle, priority));
  *stream = handle;
  return OPENREG_SUCCESS;
}

openreg_status stream_destroy(openreg_context context, openreg_stream stream) {
  constexpr const char* kFunction = "stream_destroy";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  const std::shared_ptr<Stream> removed =
      state->streams().Remove(stream).value_or(nullptr);
  if (removed == nullptr) return sim::NotLiveStream(stream, kFunction);
  // Does not block: the device keeps the stream until its work has run.
  state->device(removed->device()).DestroyStream(*removed);
  return OPENREG_SUCCESS;
}

openreg_status stream_query(openreg_context context, openreg_stream stream) {
  constexpr const char* kFunction = "stream_query";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  std::shared_ptr<Stream> target;
  SIM_RETURN_IF_ERROR(state->FindStream(stream, kFunction, &target));
  return target->Query(kFunction);
}

openreg_status stream_synchronize(openreg_context context,
                                  openreg_stream stream) {
  constexpr const char* kFunction = "stream_synchronize";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  std::shared_ptr<Stream> target;
  SIM_RETURN_IF_ERROR(state->FindStream(stream, kFunction, &target));
  return target->Synchronize(kFunction);
}

// See Note [Event versions]: the wait is for the record that is latest now.
openreg_status stream_wait_event(openreg_context context, openreg_stream stream,
                                 openreg_event event) {
  constexpr const char* kFunction = "stream_wait_event";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  std::shared_ptr<Stream> target;
  SIM_RETURN_IF_ERROR(state->FindStream(stream, kFunction, &target));
  std::shared_ptr<Event> awaited;
  SIM_RETURN_IF_ERROR(state->FindEvent(event, kFunction, &awaited));
  const uint64_t version = awaited->LatestVersion();
  // Enqueued even when that record has already completed (or there is none):
  // the wait is an item of the stream like any other, reported to the
  // activity sink once, in stream order ("Activity recording" in
  // docs/driver_abi.md). Skipping it lost the wait's record whenever the
  // worker finished the record before this call, a race the conformance
  // suite's activity test caught.
  return target->Enqueue(WorkItem::EventWait(std::move(awaited), version),
                         kFunction, nullptr);
}

openreg_status stream_get_priority(openreg_context context,
                                   openreg_stream stream, int32_t* priority) {
  constexpr const char* kFunction = "stream_get_priority";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  std::shared_ptr<Stream> target;
  SIM_RETURN_IF_ERROR(state->FindStream(stream, kFunction, &target));
  SIM_RETURN_IF_ERROR(RequireNonNull(priority, kFunction, "priority"));
  *priority = target->priority();
  return OPENREG_SUCCESS;
}

openreg_status launch_host_func(openreg_context context, openreg_stream stream,
                                openreg_host_fn fn, void* user_data) {
  constexpr const char* kFunction = "launch_host_func";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  std::shared_ptr<Stream> target;
  SIM_RETURN_IF_ERROR(state->FindStream(stream, kFunction, &target));
  SIM_RETURN_IF_ERROR(sim::RequireHostFunction(fn, kFunction));
  // An injected fault refuses the launch: nothing is enqueued and `fn` never
  // runs, so the caller keeps what `user_data` owns.
  SIM_RETURN_IF_ERROR(
      state->InjectFault(sim::FaultPoint::kLaunchHostFunc, kFunction));
  // A failure it returns becomes the stream's sticky failure
  // (Note [Sticky failures]).
  return target->Enqueue(
      WorkItem::Compute("host function",
                        [fn, user_data] { return fn(user_data); }),
      kFunction, nullptr);
}

}  // namespace openreg::threaded_sim
