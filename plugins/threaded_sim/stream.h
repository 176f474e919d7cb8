// A stream: a FIFO queue of work items and the worker thread that runs them.
//
// Each stream has its own worker thread, started by the first enqueue. The
// worker runs the items strictly in order, one at a time; items of different
// streams run concurrently, limited by the device's execution slots (see
// execution_slots.h). An item counts as finished only after it has returned,
// so Query() is exact: SUCCESS means the last item enqueued has finished, not
// merely that the queue is empty.
//
// Note [Sticky failures]
// A compute item that returns a failure status makes it the stream's sticky
// failure. The next Query() or Synchronize() of the stream (or
// device_synchronize of its device) reports it once, as
// OPENREG_ERROR_LAUNCH_FAILURE naming the failing item and status, and clears
// it. The stream keeps going: items queued after the failing one still run,
// and further failures before the report are counted in the same message.
//
// Note [Queue depth]
// A stream holds at most `queue_depth` items, queued or running, like the
// finite command buffer of a GPU (CUDA's launch blocks when its queue is
// full). Without a bound, a user thread that enqueues faster than the worker
// runs would get arbitrarily far ahead, and everything the queued work owns
// (the core keeps each op's tensors alive until the op has run) would pile
// up: a recurrent network's training loop reserved 1.5 GiB after five steps
// and spent most of its time faulting in fresh pages. The default depth, 256,
// measured no slower than 1024 on the bench's models and holds 2-3x less
// memory at their peak; 128 once came out slower on the ResNet step, and 64
// slowed the LSTM's (its host then wakes several times a step, each time
// taking a core from the worker's OpenMP team). docs/performance.md, "Memory
// kept by queued work". An enqueue from a user
// thread that finds the stream full waits until half of it has drained, so
// a producer that is faster than the worker waits once per depth/2 items,
// not once per item, and the worker wakes it once that point is reached,
// not after every item (Note [Counter bells] in counter_bell.h).
// A worker thread never waits for room: the item it is
// running may be what the full stream waits for. The bound is per stream and
// approximate by the number of threads enqueueing at once.
//
// Stopping (context_destroy, process exit): Stop() drops the queued items
// without running them; the item that is running finishes. Join() then
// waits, up to a deadline, for the worker to exit.
//
// Ownership: shared by the stream registry (while the handle is live), the
// device's stream list (until the stream is destroyed and drained), and API
// calls in progress. The worker thread uses `this` without a reference: the
// device list keeps the stream alive until the worker was joined.
// Thread-safety: all members may be called concurrently. The user threads
// and the worker share no mutex on the path of an op (Note [A queue the
// worker pops without a lock] in work_queue.h):
//   - submit_mu_ serializes the producers: the queue's producer side, the
//     worker's start, and the checks of the stop and destroy flags, which
//     are set under it so that no item is pushed after them. Only API calls
//     take it, so while one user thread launches, it stays in that thread's
//     cache.
//   - consume_mu_ guards the queue's consumer side: the worker takes it to
//     pop, Stop() to drop what is queued. Only the worker takes it per op.
//   - mu_ guards the sticky failure (taken only when an item fails or one is
//     reported) and the worker's thread object and exit flag.
//   - The counters and flags that waits poll are atomics, written with
//     seq_cst (as doorbell conditions require) and read without a lock;
//     enqueued_ is the producers' and finished_ the worker's, each on a cache
//     line of its own.
// Nobody waits on a mutex for work or completion: the worker sleeps on
// work_bell_ (Note [Doorbells] in doorbell.h), synchronizers on
// finished_waiters_ and producers waiting for room on room_waiters_ (Note
// [Counter bells] in counter_bell.h). Lock order: submit_mu_, then mu_, then
// the execution slots, then an event; consume_mu_ is taken alone.
// Synchronize(), AwaitFinished() and Join() block.
#ifndef OPENREG_PLUGINS_THREADED_SIM_STREAM_H_
#define OPENREG_PLUGINS_THREADED_SIM_STREAM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/activity_recorder.h"
#include "plugins/threaded_sim/adversarial_delay.h"
#include "plugins/threaded_sim/counter_bell.h"
#include "plugins/threaded_sim/doorbell.h"
#include "plugins/threaded_sim/execution_slots.h"
#include "plugins/threaded_sim/work_item.h"
#include "plugins/threaded_sim/work_queue.h"

namespace openreg::threaded_sim {

// A failure of asynchronous work, waiting to be reported.
struct AsyncFailure {
  openreg_stream stream;
  const char* description;  // what failed, e.g. "host function"
  openreg_status status;    // what it returned
  uint64_t item_number;     // its position on the stream, from 1
  uint64_t later_failures;  // failures on the stream since, not reported

  // "host function (item 3 of stream 0x...) returned status 2
  // (OPENREG_ERROR_INVALID_DEVICE)", plus the count of later failures.
  std::string Describe() const;
};

class Stream {
 public:
  // `slots` belongs to the stream's device and outlives the stream, as
  // `activity`, the context's recorder, does.
  // The worker gives back the OpenMP workers its host functions left it
  // owning once it has been idle for `idle_release_delay` (see
  // third_party/openmp/thread_workers.h).
  // It holds up to `queue_depth` items (Note [Queue depth]).
  Stream(openreg_stream handle, int32_t device, int32_t priority,
         ExecutionSlots* slots, sim::ActivityRecorder* activity,
         AdversarialDelay delay, absl::Duration idle_release_delay,
         uint64_t queue_depth);
  // The worker must have been joined (see Join).
  ~Stream();

  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  openreg_stream handle() const { return handle_; }
  int32_t device() const { return device_; }
  int32_t priority() const { return priority_; }

  // The stream whose worker is the calling thread, or null: API calls use it
  // to refuse waits that would make a worker wait for itself.
  static const Stream* CurrentWorker();

  // Appends `item` (after waiting for room, Note [Queue depth]), tagged for
  // activity recording on the calling thread (Note [Recording costs one check
  // per item when off] in activity_recorder.h), and stores
  // its number (position on the stream, from 1) in `*ticket` when `ticket` is
  // not null. Fails (naming `function`) after
  // RequestDestroy() or Stop(), or when the worker thread cannot start.
  openreg_status Enqueue(WorkItem item, const char* function,
                         uint64_t* ticket);

  // The number of items enqueued so far.
  uint64_t enqueued() const;

  // Blocks until items 1..ticket have finished (true) or Stop() was called
  // (false).
  bool AwaitFinished(uint64_t ticket);

  // stream_query: the sticky failure (reported once), else SUCCESS when every
  // item enqueued so far has finished and NOT_READY otherwise.
  openreg_status Query(const char* function);

  // stream_synchronize: waits for every item enqueued before the call, then
  // reports the sticky failure if there is one.
  openreg_status Synchronize(const char* function);

  // Removes and returns the sticky failure, if any.
  std::optional<AsyncFailure> TakeFailure();

  // stream_destroy: later Enqueue() calls fail; the worker exits once the
  // queue is drained.
  void RequestDestroy();
  // True once destroyed and drained with its worker gone (or never started),
  // so that Join() returns at once.
  bool Retired() const;

  // Stop (context_destroy, process exit): drops queued items without running
  // them and makes every wait of this stream return. Returns the events whose
  // dropped markers will now never run: the caller cancels them once every
  // stream is stopped (so that no worker proceeds past a cancelled wait into
  // work that the stop drops).
  std::vector<std::shared_ptr<Event>> Stop();
  // Waits until `deadline` for the worker to exit and joins it. Returns false
  // when the worker is still running an item (or is the calling thread); it
  // is then detached, and the stream must never be destroyed.
  bool Join(absl::Time deadline);

 private:
  void WorkerLoop();
  // Note [Queue depth]: on a user thread, waits while the stream is full.
  void WaitForRoom();
  // Runs `item` on the worker. Sets *holds_slot when it took an execution
  // slot. Returns the item's status, or nullopt when Stop() came first.
  std::optional<openreg_status> Execute(WorkItem& item, bool* holds_slot);
  // Waits `delay` (the adversarial delay); false when Stop() came first.
  bool SleepUnlessStopped(absl::Duration delay);
  // For the worker: takes the next item into *item, if there is one and
  // the stream is not stopping, and asks for its execution slot unless
  // Enqueue did (Note [Execution slots and stream priorities]).
  bool TakeNext(WorkItem* item);
  // For the worker, which has taken `taken` items: more were enqueued, or it
  // must exit. Reads only atomics (a doorbell condition).
  bool HasWorkOrMustExit(uint64_t taken) const;
  std::string Describe() const;

  const openreg_stream handle_;
  const int32_t device_;
  const int32_t priority_;
  ExecutionSlots* const slots_;
  sim::ActivityRecorder* const activity_;
  // Used only by the worker thread.
  AdversarialDelay delay_;
  const absl::Duration idle_release_delay_;
  const uint64_t queue_depth_;
  mutable absl::Mutex mu_;
  std::optional<AsyncFailure> failure_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> has_failure_{false};  // failure_ has a value
  bool worker_exited_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_ ABSL_GUARDED_BY(mu_);

  // What an op's path writes, each group on cache lines of its own, so that
  // a thread writing one never takes a line away from a thread that polls or
  // writes another (the two threads are often on different cores; Note [A
  // queue the worker pops without a lock] in work_queue.h).
  //
  // The producers': submit_mu_, then the count the worker polls and the flags
  // it polls with it. The flags are set under submit_mu_ and mu_ (seq_cst, as
  // doorbell conditions require).
  alignas(64) mutable absl::Mutex submit_mu_;
  bool worker_started_ ABSL_GUARDED_BY(submit_mu_) = false;
  alignas(64) std::atomic<uint64_t> enqueued_{0};
  std::atomic<bool> destroy_requested_{false};
  std::atomic<bool> stopping_{false};
  // The worker's: consume_mu_, then the count synchronizers poll.
  alignas(64) absl::Mutex consume_mu_;
  alignas(64) std::atomic<uint64_t> finished_{0};
  // Written by whoever asks for the slot and by the worker that takes it.
  // Owned by slots_ while queued or granted; see execution_slots.h.
  alignas(64) SlotRequest slot_request_;
  // Rung when work is enqueued or the worker must exit; the worker sleeps on
  // it.
  alignas(64) Doorbell work_bell_;
  // Threads waiting for finished_ to reach an item of theirs:
  // AwaitFinished() (synchronizations, copies) and WaitForRoom() (Note [Queue
  // depth]). The worker tells both after every item; Stop() wakes both.
  alignas(64) CounterBell finished_waiters_;
  alignas(64) CounterBell room_waiters_;
  // Pushed under submit_mu_, popped under consume_mu_.
  WorkQueue queue_;
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_STREAM_H_
