// One entry of a stream's queue.
//
// Ownership: a WorkItem owns what its work needs after the enqueueing call
// returned (a staged copy of pageable source bytes, a reference to its
// event); it is destroyed on the worker thread after it ran, or when its
// context stops, if it never ran.
// Thread-safety: an item is built by an API call, moved into its stream's
// queue, and moved out and run by that stream's worker thread; no two
// threads use it at once (work_queue.h).
#ifndef OPENREG_PLUGINS_THREADED_SIM_WORK_ITEM_H_
#define OPENREG_PLUGINS_THREADED_SIM_WORK_ITEM_H_

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/activity_recorder.h"
#include "plugins/threaded_sim/event.h"

namespace openreg::threaded_sim {

struct WorkItem {
  enum class Kind {
    // A host function, copy or memset: runs `compute` holding an execution
    // slot; a failure status becomes the stream's sticky failure.
    kCompute,
    // The marker of an event_record: completes `version` of `event`.
    kEventMarker,
    // A stream_wait_event: blocks the stream until `version` of `event`
    // completes.
    kEventWait,
  };

  // A host function.
  static WorkItem Compute(const char* description,
                          absl::AnyInvocable<openreg_status()> compute) {
    WorkItem item;
    item.kind = Kind::kCompute;
    item.description = description;
    item.compute = std::move(compute);
    return item;
  }
  // A copy of `bytes` in direction `memcpy_kind` (OPENREG_MEMCPY_*).
  static WorkItem Copy(const char* description, int32_t memcpy_kind,
                       uint64_t bytes,
                       absl::AnyInvocable<openreg_status()> compute) {
    WorkItem item = Compute(description, std::move(compute));
    item.activity_kind = OPENREG_ACTIVITY_MEMCPY;
    item.memcpy_kind = memcpy_kind;
    item.bytes = bytes;
    return item;
  }
  // A memset of `bytes`.
  static WorkItem Memset(uint64_t bytes,
                         absl::AnyInvocable<openreg_status()> compute) {
    WorkItem item = Compute("memset_async", std::move(compute));
    item.activity_kind = OPENREG_ACTIVITY_MEMSET;
    item.bytes = bytes;
    return item;
  }
  static WorkItem EventMarker(std::shared_ptr<Event> event, uint64_t version) {
    return ForEvent(Kind::kEventMarker, OPENREG_ACTIVITY_EVENT_RECORD,
                    "event_record marker", std::move(event), version);
  }
  static WorkItem EventWait(std::shared_ptr<Event> event, uint64_t version) {
    return ForEvent(Kind::kEventWait, OPENREG_ACTIVITY_EVENT_WAIT,
                    "stream_wait_event wait", std::move(event), version);
  }

  // Only compute items take an execution slot (see execution_slots.h).
  bool needs_execution_slot() const { return kind == Kind::kCompute; }

  Kind kind = Kind::kCompute;
  // A static string naming the work in failure messages, e.g.
  // "host function".
  const char* description = "";
  absl::AnyInvocable<openreg_status()> compute;
  std::shared_ptr<Event> event;
  uint64_t version = 0;
  // What its activity record says (ABI 2.2): OPENREG_ACTIVITY_*, and for
  // copies and memsets their direction and size.
  int32_t activity_kind = OPENREG_ACTIVITY_HOST_FUNCTION;
  int32_t memcpy_kind = -1;
  uint64_t bytes = 0;
  // Set by Stream::Enqueue on the enqueueing thread.
  sim::ActivityTag activity;
  // Set by Stream::Enqueue when it asked for the item's execution slot
  // itself (the stream was idle); else the worker asks when it takes the
  // item (Note [Execution slots and stream priorities]).
  bool slot_requested = false;

 private:
  // The item of `version` of `event`: the marker and the wait differ only in
  // kind and description.
  static WorkItem ForEvent(Kind kind, int32_t activity_kind,
                           const char* description,
                           std::shared_ptr<Event> event, uint64_t version) {
    WorkItem item;
    item.kind = kind;
    item.activity_kind = activity_kind;
    item.description = description;
    item.event = std::move(event);
    item.version = version;
    return item;
  }
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_WORK_ITEM_H_
