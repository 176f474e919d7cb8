#include <memory>

#include "plugins/cpu_sim/api.h"
#include "plugins/cpu_sim/driver_state.h"
#include "plugins/sim_support/error.h"
#include "plugins/cpu_sim/stream.h"

namespace openreg::cpu_sim {

using sim::RequireNonNull;

openreg_status EventCreate(int32_t device, uint32_t flags,
                           openreg_event* event) {
  std::shared_ptr<DriverState> state = AcquireState("event_create");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, "event_create"));
  SIM_RETURN_IF_ERROR(RequireNonNull(event, "event_create", "event"));
  return state->events().Create(device, flags, event);
}

openreg_status EventDestroy(openreg_event event) {
  std::shared_ptr<DriverState> state = AcquireState("event_destroy");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  return state->events().Destroy(event);
}

openreg_status EventRecord(openreg_event event, openreg_stream stream) {
  std::shared_ptr<DriverState> state = AcquireState("event_record");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  StreamInfo stream_info;
  if (openreg_status s =
          state->streams().Lookup(stream, "event_record", &stream_info);
      s != OPENREG_SUCCESS) {
    return s;
  }
  return state->events().Record(event, stream_info.device);
}

// Records complete as they are made (see event.h), so query and synchronize
// only validate the handle.
openreg_status EventQuery(openreg_event event) {
  std::shared_ptr<DriverState> state = AcquireState("event_query");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  return state->events().CheckLive(event, "event_query");
}

openreg_status EventSynchronize(openreg_event event) {
  std::shared_ptr<DriverState> state = AcquireState("event_synchronize");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  return state->events().CheckLive(event, "event_synchronize");
}

openreg_status EventElapsedTime(openreg_event start, openreg_event end,
                                float* milliseconds) {
  std::shared_ptr<DriverState> state = AcquireState("event_elapsed_time");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  if (openreg_status s =
          RequireNonNull(milliseconds, "event_elapsed_time", "milliseconds");
      s != OPENREG_SUCCESS) {
    return s;
  }
  return state->events().ElapsedMilliseconds(start, end, milliseconds);
}

}  // namespace openreg::cpu_sim
