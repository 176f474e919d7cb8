#include "plugins/sim_support/stream_event_checks.h"

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {
namespace {

constexpr uint32_t kKnownEventFlags = OPENREG_EVENT_ENABLE_TIMING;

}  // namespace

openreg_status CheckStreamCreate(const SimState& state, int32_t device,
                                 int32_t priority,
                                 const openreg_stream* stream) {
  constexpr const char* kFunction = "stream_create";
  SIM_RETURN_IF_ERROR(state.CheckDevice(device, kFunction));
  SIM_RETURN_IF_ERROR(RequireNonNull(stream, kFunction, "stream"));
  return state.CheckStreamPriority(device, priority, kFunction);
}

openreg_status CheckEventCreate(const SimState& state, int32_t device,
                                uint32_t flags, const openreg_event* event) {
  constexpr const char* kFunction = "event_create";
  SIM_RETURN_IF_ERROR(state.CheckDevice(device, kFunction));
  SIM_RETURN_IF_ERROR(RequireNonNull(event, kFunction, "event"));
  if ((flags & ~kKnownEventFlags) == 0) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_NOT_SUPPORTED,
              absl::StrFormat("%s: flags 0x%x contain bits 0x%x that %s does "
                              "not support; the only supported flag is "
                              "OPENREG_EVENT_ENABLE_TIMING (0x%x)",
                              kFunction, flags, flags & ~kKnownEventFlags,
                              state.driver_name(), kKnownEventFlags));
}

openreg_status CheckTimingEventRecorded(openreg_event event, bool timing,
                                        bool recorded, const char* role) {
  constexpr const char* kFunction = "event_elapsed_time";
  if (!timing) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: %s event %p was created without "
                                "OPENREG_EVENT_ENABLE_TIMING; create it with "
                                "that flag to time it",
                                kFunction, role, event));
  }
  if (!recorded) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: %s event %p was never recorded; call "
                                "event_record on it first",
                                kFunction, role, event));
  }
  return OPENREG_SUCCESS;
}

}  // namespace openreg::sim
