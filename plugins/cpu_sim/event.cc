#include "plugins/cpu_sim/event.h"

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/stream_event_checks.h"

namespace openreg::cpu_sim {

using sim::Fail;

namespace {

// Why `info` cannot be used for timing, or SUCCESS. `role` is "start" or
// "end", the event's parameter name in event_elapsed_time.
openreg_status CheckTimeable(const EventInfo& info, openreg_event event,
                             const char* role) {
  return sim::CheckTimingEventRecorded(
      event, (info.flags & OPENREG_EVENT_ENABLE_TIMING) != 0,
      info.recorded_at.has_value(), role);
}

}  // namespace

openreg_status EventTable::Create(int32_t device, uint32_t flags,
                                  openreg_event* event) {
  *event = registry_.Add(EventInfo{device, flags, std::nullopt});
  return OPENREG_SUCCESS;
}

openreg_status EventTable::Destroy(openreg_event event) {
  if (!registry_.Remove(event)) {
    return sim::NotLiveEvent(event, "event_destroy");
  }
  return OPENREG_SUCCESS;
}

openreg_status EventTable::Lookup(openreg_event event, const char* function,
                                  EventInfo* info) const {
  const std::optional<EventInfo> found = registry_.Find(event);
  if (!found.has_value()) return sim::NotLiveEvent(event, function);
  *info = *found;
  return OPENREG_SUCCESS;
}

openreg_status EventTable::Record(openreg_event event, int32_t stream_device) {
  enum class Outcome { kNotLive, kWrongDevice, kRecorded };
  int32_t event_device = 0;
  const Outcome outcome = registry_.Modify(
      event, Outcome::kNotLive, [&](EventInfo& info) {
        if (info.device != stream_device) {
          event_device = info.device;
          return Outcome::kWrongDevice;
        }
        info.recorded_at = std::chrono::steady_clock::now();
        return Outcome::kRecorded;
      });
  switch (outcome) {
    case Outcome::kNotLive:
      return sim::NotLiveEvent(event, "event_record");
    case Outcome::kWrongDevice:
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("event_record: event %p belongs to device "
                                  "%d but the stream belongs to device %d; "
                                  "record an event on a stream of its own "
                                  "device",
                                  event, event_device, stream_device));
    case Outcome::kRecorded:
      break;
  }
  return OPENREG_SUCCESS;
}

openreg_status EventTable::ElapsedMilliseconds(openreg_event start,
                                               openreg_event end,
                                               float* milliseconds) const {
  EventInfo start_info;
  EventInfo end_info;
  SIM_RETURN_IF_ERROR(Lookup(start, "event_elapsed_time", &start_info));
  SIM_RETURN_IF_ERROR(Lookup(end, "event_elapsed_time", &end_info));
  SIM_RETURN_IF_ERROR(CheckTimeable(start_info, start, "start"));
  SIM_RETURN_IF_ERROR(CheckTimeable(end_info, end, "end"));
  *milliseconds = std::chrono::duration<float, std::milli>(
                      *end_info.recorded_at - *start_info.recorded_at)
                      .count();
  return OPENREG_SUCCESS;
}

openreg_status EventTable::CheckLive(openreg_event event,
                                  const char* function) const {
  EventInfo info;
  return Lookup(event, function, &info);
}

}  // namespace openreg::cpu_sim
