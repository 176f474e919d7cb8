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
// it will run: at enqueue if the stream is idle, else when its worker takes
// the item, as soon as the previous item finished and before that item's slot
// is given back (Stream::Enqueue, Stream::TakeNext). Requests are therefore registered in the order the program made
// the work visible, not in the order worker threads happen to wake up, and
// this makes priorities deterministic: a freed slot goes to the waiting
// request with the highest priority (the lowest number, as in CUDA), and
// among equal priorities to the oldest request. So with execution_slots=1,
// work enqueued on a high-priority stream overtakes low-priority work that
// was queued earlier but has not started. Running items are never preempted,
// and steady high-priority work can starve lower priorities, as on CUDA.
//
// Uncontended, a slot is taken and given back without the mutex, as a
// semaphore does: with no request waiting, Request() takes a free slot with
// one compare-exchange and Release() returns it with one increment. The
// mutex, the waiting map and the priority order come in only when a request
// must wait. Before, every item of a lone stream took the mutex three times
// (the host thread's request, the worker's wait and release) and inserted
// into and erased from the map: ~670 instructions in those calls per tiny
// op, and the mutex passed between the two threads' cores at every item.
//
// Thread-safety: all members may be called concurrently. mu_ guards the
// waiting requests and the ticket counter. `free_`, `waiting_count_` and
// `cancelled_` are atomics read without the mutex and, except for the free
// count's lock-free take and return, written under it. A grant is a
// SlotRequest's atomic flag. The slow paths pair without a lost slot: a request
// that registers as waiting then looks at `free_`, and a release that adds to
// `free_` then looks at `waiting_count_` (both sequentially consistent), so
// at least one of them sees the other and the grant happens under mu_.
// Request() is called by API calls (under their stream's submit mutex: lock
// order is stream, then slots) and by workers; AwaitGrant() and Release() by worker
// threads; Cancel() by a stop (context_destroy, process exit). AwaitGrant()
// blocks.
#ifndef OPENREG_PLUGINS_THREADED_SIM_EXECUTION_SLOTS_H_
#define OPENREG_PLUGINS_THREADED_SIM_EXECUTION_SLOTS_H_

#include <atomic>
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
  std::atomic<bool> granted_{false};
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
  // Takes a free slot if there is one.
  bool TakeFree();
  void GrantWhileFree() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int32_t count_;
  absl::Mutex mu_;
  std::atomic<int32_t> free_;
  uint64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  // Ordered by (priority, ticket): the first entry is the best request.
  absl::btree_map<std::pair<int32_t, uint64_t>, SlotRequest*> waiting_
      ABSL_GUARDED_BY(mu_);
  // waiting_.size(), for the lock-free paths.
  std::atomic<size_t> waiting_count_{0};
  std::atomic<bool> cancelled_{false};
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_EXECUTION_SLOTS_H_
