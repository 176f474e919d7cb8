// The execution slots of one device, and the priority order in which streams
// get them.
//
// Note [Execution slots and stream priorities]
// A device runs at most `count` compute items (host functions, copies,
// memsets) at the same time, whatever the number of streams: that is the
// `execution_slots` option and the device's concurrent_streams property. A
// stream's worker must hold a slot while it runs a compute item; event markers
// and event waits take none, so a stream blocked on an event never keeps
// another stream's compute from running.
//
// A stream requests a slot when an item that needs one becomes the next item
// it will run: at enqueue if the stream is idle, else when its previous item
// finishes. Requests are therefore registered in the order the program made
// the work visible, not in the order worker threads happen to wake up, and
// this makes priorities deterministic: a freed slot goes to the waiting
// request with the highest priority (the lowest number, as in CUDA), and
// among equal priorities to the oldest request. So with execution_slots=1,
// work enqueued on a high-priority stream overtakes low-priority work that
// was queued earlier but has not started. Running items are never preempted,
// and steady high-priority work can starve lower priorities, as on CUDA.
//
// Thread-safety: all members may be called concurrently. mu_ guards the free
// count, the waiting requests and every SlotRequest's state. Request() is
// called by API calls (under their stream's mutex: lock order is stream, then
// slots); AwaitGrant() and Release() by worker threads; Cancel() by
// a stop (context_destroy, process exit). AwaitGrant() blocks.
#ifndef OPENREG_PLUGINS_THREADED_SIM_EXECUTION_SLOTS_H_
#define OPENREG_PLUGINS_THREADED_SIM_EXECUTION_SLOTS_H_

#include <cstdint>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/synchronization/mutex.h"

namespace openreg::threaded_sim {

// One stream's request for a slot. Owned by the stream, which has at most one
// request outstanding; its state belongs to the ExecutionSlots it is given to.
class SlotRequest {
 private:
  friend class ExecutionSlots;
  bool granted_ = false;
};

class ExecutionSlots {
 public:
  explicit ExecutionSlots(int32_t count);

  ExecutionSlots(const ExecutionSlots&) = delete;
  ExecutionSlots& operator=(const ExecutionSlots&) = delete;

  int32_t count() const { return count_; }

  // Queues `request`, which must not be queued or granted already, at
  // `priority`; it is granted at once if a slot is free.
  void Request(SlotRequest* request, int32_t priority);

  // Blocks until `request` is granted (true: the caller now holds a slot and
  // must Release() it) or Cancel() was called (false).
  bool AwaitGrant(SlotRequest* request);

  // Gives back a slot that AwaitGrant() granted; the best waiting request
  // gets it.
  void Release();

  // Grants nothing more and wakes every waiter. For a stopped context, whose
  // streams drop their remaining work.
  void Cancel();

 private:
  void GrantWhileFree() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int32_t count_;
  absl::Mutex mu_;
  int32_t free_ ABSL_GUARDED_BY(mu_);
  uint64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  // Ordered by (priority, ticket): the first entry is the best request.
  absl::btree_map<std::pair<int32_t, uint64_t>, SlotRequest*> waiting_
      ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_EXECUTION_SLOTS_H_
