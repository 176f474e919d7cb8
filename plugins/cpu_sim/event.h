// Event bookkeeping. cpu_sim is synchronous, so a record's marker "runs" the
// moment event_record is called: the event completes and, if it times, takes
// its timestamp right then. Events are therefore never NOT_READY.
//
// Ownership: EventTable owns the record of every live event.
// Thread-safety: all members may be called concurrently; the registry's mutex
// guards the records, including the timestamps written by Record().
#ifndef OPENREG_PLUGINS_CPU_SIM_EVENT_H_
#define OPENREG_PLUGINS_CPU_SIM_EVENT_H_

#include <chrono>
#include <cstdint>
#include <optional>

#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/handle_registry.h"

namespace openreg::cpu_sim {

struct EventInfo {
  int32_t device;
  uint32_t flags;
  // When the latest record ran; empty while the event was never recorded.
  std::optional<std::chrono::steady_clock::time_point> recorded_at;
};

class EventTable {
 public:
  // event_create on an already validated `device` and `flags`
  // (sim::CheckEventCreate).
  openreg_status Create(int32_t device, uint32_t flags, openreg_event* event);

  // event_destroy: INVALID_ARGUMENT when `event` is not live.
  openreg_status Destroy(openreg_event event);

  // Fills `info` for a live `event`, else fails with INVALID_ARGUMENT and a
  // message naming `function`, the API call being served.
  openreg_status Lookup(openreg_event event, const char* function,
                        EventInfo* info) const;

  // Lookup() for callers that only need the handle to be live.
  openreg_status CheckLive(openreg_event event, const char* function) const;

  // event_record on a stream of `stream_device`: the event must live on that
  // same device.
  openreg_status Record(openreg_event event, int32_t stream_device);

  // event_elapsed_time between two recorded timing events.
  openreg_status ElapsedMilliseconds(openreg_event start, openreg_event end,
                                     float* milliseconds) const;

 private:
  sim::HandleRegistry<openreg_event, EventInfo> registry_;
};

}  // namespace openreg::cpu_sim

#endif  // OPENREG_PLUGINS_CPU_SIM_EVENT_H_
