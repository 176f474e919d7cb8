#include "plugins/threaded_sim/stream.h"

#include <pthread.h>

#include <optional>
#include <system_error>
#include <utility>

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"
#include "plugins/threaded_sim/queue_room.h"
#include "third_party/openmp/thread_workers.h"

namespace openreg::threaded_sim {

using sim::Fail;
using sim::StatusName;

namespace {

// Set for the lifetime of a worker thread's loop.
thread_local const Stream* t_current_worker = nullptr;

// How long a thread polls before it sleeps (Note [Doorbells]). A worker that
// ran out of work polls for the next op: a Python loop of tiny ops enqueues
// one every few microseconds, so the worker catches it without either side
// paying a futex wake-up; it polls less when its work comes with longer gaps
// (AdaptiveSpin). A synchronizer polls for the item that is about to
// finish. Both are bounded so that a core shared with other work is given
// back soon; on a machine with one hardware thread polling would only delay
// the thread it waits for, so nobody polls.
absl::Duration SpinUnlessSingleCore(absl::Duration spin) {
  static const bool single_core = std::thread::hardware_concurrency() <= 1;
  return single_core ? absl::ZeroDuration() : spin;
}
const absl::Duration kWorkerSpin = absl::Microseconds(50);
const absl::Duration kSynchronizeSpin = absl::Microseconds(20);

// Queue nodes kept for reuse beyond the stream's depth (WorkQueue's
// nodes_kept).
constexpr uint64_t kQueueNodesBeyondDepth = 64;

}  // namespace

std::string AsyncFailure::Describe() const {
  std::string text = absl::StrFormat(
      "%s (item %u of stream %p) returned status %d (%s)", description,
      item_number, stream, status, StatusName(status));
  if (later_failures > 0) {
    absl::StrAppendFormat(&text, ", and %u later item(s) of that stream failed "
                          "too", later_failures);
  }
  return text;
}

Stream::Stream(openreg_stream handle, int32_t device, int32_t priority,
               ExecutionSlots* slots, sim::ActivityRecorder* activity,
               AdversarialDelay delay, absl::Duration idle_release_delay,
               uint64_t queue_depth)
    : handle_(handle),
      device_(device),
      priority_(priority),
      slots_(slots),
      activity_(activity),
      delay_(delay),
      idle_release_delay_(idle_release_delay),
      queue_depth_(queue_depth),
      // A full stream holds queue_depth items; producers that found room at
      // once and items that worker threads enqueue may add some beyond it.
      queue_(queue_depth + kQueueNodesBeyondDepth) {}

// worker_ is joined or was never started (Join's contract); a joinable
// std::thread here would terminate the process, which is the right outcome
// for that broken invariant.
Stream::~Stream() = default;

const Stream* Stream::CurrentWorker() { return t_current_worker; }

std::string Stream::Describe() const {
  return absl::StrFormat("stream %p (device %d, priority %d)", handle_,
                         device_, priority_);
}

void Stream::WaitForRoom() {
  if (t_current_worker != nullptr) return;
  // Note [Room counted from two reads]: the enqueued count first.
  const uint64_t enqueued = enqueued_.load();
  const std::optional<uint64_t> target =
      FinishedCountToWaitFor(enqueued, finished_.load(), queue_depth_);
  if (!target.has_value()) return;
  // Returns early when the stream stops, and Enqueue then refuses the item.
  room_waiters_.Wait(finished_, *target, [this] { return stopping_.load(); },
                     SpinUnlessSingleCore(kSynchronizeSpin));
}

openreg_status Stream::Enqueue(WorkItem item, const char* function,
                               uint64_t* ticket) {
  WaitForRoom();
  item.activity = activity_->Tag();
  uint64_t number = 0;
  {
    absl::MutexLock lock(&submit_mu_);
    if (stopping_) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("%s: %s is stopped (the process is exiting, "
                                  "or its context was destroyed); no work is "
                                  "accepted",
                                  function, Describe()));
    }
    if (destroy_requested_) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("%s: %s was destroyed by a concurrent "
                                  "stream_destroy",
                                  function, Describe()));
    }
    if (!worker_started_) {
      absl::MutexLock worker_lock(&mu_);
      try {
        worker_ = std::thread(&Stream::WorkerLoop, this);
      } catch (const std::system_error& error) {
        return Fail(OPENREG_ERROR_OUT_OF_MEMORY,
                    absl::StrFormat("%s: could not start the worker thread of "
                                    "%s: %s",
                                    function, Describe(), error.what()));
      }
      worker_started_ = true;
    }
    number = enqueued_.load(std::memory_order_relaxed) + 1;
    // An item that becomes the head of an idle stream asks for its slot now,
    // so that requests are ordered as the program made the work visible
    // (Note [Execution slots and stream priorities]). Every item before it
    // has finished and the worker has not seen it, so the worker's own ask
    // (TakeNext) cannot have happened and will not.
    if (item.needs_execution_slot() && finished_.load() == number - 1) {
      slots_->Request(&slot_request_, priority_);
      item.slot_requested = true;
    }
    queue_.Push(std::move(item));
    enqueued_.store(number);
  }
  if (ticket != nullptr) *ticket = number;
  work_bell_.Ring();
  return OPENREG_SUCCESS;
}

bool Stream::TakeNext(WorkItem* item) {
  {
    absl::MutexLock lock(&consume_mu_);
    if (stopping_.load() || !queue_.TryPop(item)) return false;
  }
  // The stream was busy when the item was enqueued: it asks now that it is
  // the head, before the previous item's slot is given back.
  if (item->needs_execution_slot() && !item->slot_requested) {
    slots_->Request(&slot_request_, priority_);
  }
  return true;
}

uint64_t Stream::enqueued() const { return enqueued_.load(); }

bool Stream::AwaitFinished(uint64_t ticket) {
  // Woken when item `ticket` finishes, not after every item before it (Note
  // [Counter bells]).
  return finished_waiters_.Wait(finished_, ticket,
                                [this] { return stopping_.load(); },
                                SpinUnlessSingleCore(kSynchronizeSpin));
}

openreg_status Stream::Query(const char* function) {
  // finished_ before the failure: a failing item's failure is set before
  // finished_ counts it.
  const bool all_finished = finished_.load() == enqueued_.load();
  std::optional<AsyncFailure> failure = TakeFailure();
  if (!failure.has_value()) {
    return all_finished ? OPENREG_SUCCESS : OPENREG_ERROR_NOT_READY;
  }
  return Fail(OPENREG_ERROR_LAUNCH_FAILURE,
              absl::StrFormat("%s: asynchronous work failed: %s; the failure "
                              "is reported once and the stream keeps running",
                              function, failure->Describe()));
}

openreg_status Stream::Synchronize(const char* function) {
  if (CurrentWorker() == this) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: called by a host function running on %s "
                                "itself, which would wait for itself forever; "
                                "host functions must not synchronize their "
                                "own stream",
                                function, Describe()));
  }
  const uint64_t target = enqueued();
  if (!AwaitFinished(target)) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: %s was stopped (the process is exiting, "
                                "or its context was destroyed) before its "
                                "work finished",
                                function, Describe()));
  }
  std::optional<AsyncFailure> failure = TakeFailure();
  if (!failure.has_value()) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_LAUNCH_FAILURE,
              absl::StrFormat("%s: asynchronous work failed: %s; the failure "
                              "is reported once and the stream keeps running",
                              function, failure->Describe()));
}

std::optional<AsyncFailure> Stream::TakeFailure() {
  // Set before finished_ moves past the failing item, so a caller that saw
  // its work finish sees its failure here.
  if (!has_failure_.load()) return std::nullopt;
  absl::MutexLock lock(&mu_);
  has_failure_.store(false);
  return std::exchange(failure_, std::nullopt);
}

void Stream::RequestDestroy() {
  {
    // Under submit_mu_: every push has finished, and none follows.
    absl::MutexLock lock(&submit_mu_);
    destroy_requested_.store(true);
  }
  work_bell_.Ring();
}

bool Stream::Retired() const {
  absl::MutexLock submit_lock(&submit_mu_);
  absl::MutexLock lock(&mu_);
  return destroy_requested_ && (!worker_started_ || worker_exited_);
}

std::vector<std::shared_ptr<Event>> Stream::Stop() {
  {
    // Under submit_mu_, so that no push follows; under mu_, so that a worker
    // in SleepUnlessStopped wakes.
    absl::MutexLock submit_lock(&submit_mu_);
    absl::MutexLock lock(&mu_);
    stopping_.store(true);
  }
  work_bell_.Ring();
  finished_waiters_.RingAll();
  room_waiters_.RingAll();
  std::vector<std::shared_ptr<Event>> orphaned_events;
  // The worker takes nothing more once stopping_ is set (TakeNext); what is
  // left is dropped here, outside the lock, since items may own buffers.
  std::vector<WorkItem> dropped;
  {
    absl::MutexLock lock(&consume_mu_);
    WorkItem item;
    while (queue_.TryPop(&item)) dropped.push_back(std::move(item));
  }
  for (WorkItem& item : dropped) {
    if (item.kind == WorkItem::Kind::kEventMarker) {
      orphaned_events.push_back(std::move(item.event));
    }
  }
  return orphaned_events;
}

bool Stream::Join(absl::Time deadline) {
  std::thread worker;
  {
    absl::MutexLock lock(&mu_);
    if (!worker_.joinable()) return true;
    if (worker_.get_id() == std::this_thread::get_id()) {
      // exit() or context_destroy called from a host function on this stream.
      worker_.detach();
      return false;
    }
    if (!mu_.AwaitWithDeadline(absl::Condition(&worker_exited_), deadline)) {
      worker_.detach();
      return false;
    }
    worker = std::move(worker_);
  }
  worker.join();
  return true;
}

bool Stream::HasWorkOrMustExit(uint64_t taken) const {
  return enqueued_.load() > taken || stopping_.load() ||
         destroy_requested_.load();
}

void Stream::WorkerLoop() {
  t_current_worker = this;
  // Named for people reading a debugger or /proc: the OpenMP workers this
  // thread may start inherit the name too.
  pthread_setname_np(pthread_self(), "openreg_stream");
  // Whether a host function ran since the last release: it may have left this
  // thread owning OpenMP workers, which slow the whole process's CPU work
  // until given back (see Note [OpenMP worker pools on device threads]).
  bool may_own_host_workers = false;
  // Items taken from the queue; only this thread counts them.
  uint64_t taken = 0;
  AdaptiveSpin spin(SpinUnlessSingleCore(kWorkerSpin));
  absl::Duration slept;
  auto has_work = [this, &taken] { return HasWorkOrMustExit(taken); };
  // The next item to run; `has_item` says whether there is one. The worker
  // takes it as soon as the previous one finished, before giving back that
  // one's slot.
  WorkItem item;
  bool has_item = false;
  while (true) {
    if (!has_item) {
      const bool woken =
          may_own_host_workers && work_bell_.Wait(has_work, spin.current(),
                                                  idle_release_delay_, &slept);
      if (!woken) {
        if (may_own_host_workers) {
          openmp::ReleaseCallingThreadWorkers();
          may_own_host_workers = false;
        }
        work_bell_.Wait(has_work, spin.current(), absl::InfiniteDuration(),
                        &slept);
      }
      spin.Record(slept);
      // Woken with nothing to take: stopped, or destroyed and drained (no
      // push follows the destroy flag, and every push before it is seen).
      if (!TakeNext(&item)) {
        if (stopping_.load() || destroy_requested_.load()) break;
        continue;
      }
      ++taken;
    }
    bool holds_slot = false;
    may_own_host_workers |= item.kind == WorkItem::Kind::kCompute;
    const std::optional<openreg_status> status = Execute(item, &holds_slot);
    const char* const description = item.description;
    // The closure may own buffers to free.
    item = WorkItem();
    if (status.has_value()) {
      const uint64_t number = finished_.load(std::memory_order_relaxed) + 1;
      if (*status != OPENREG_SUCCESS) {
        absl::MutexLock lock(&mu_);
        if (failure_.has_value()) {
          ++failure_->later_failures;
        } else {
          failure_ = AsyncFailure{handle_, description, *status, number, 0};
        }
        // Before finished_ counts the item (see TakeFailure).
        has_failure_.store(true);
      }
      finished_.store(number);
    }
    // Before releasing the slot, so that the next item competes for it with
    // everything already waiting. The count first: reading the queue's last
    // node when nothing follows it would pull its line to this core just
    // before the producer writes the next item's link into it.
    has_item = enqueued_.load() > taken && TakeNext(&item);
    if (has_item) ++taken;
    const uint64_t finished = finished_.load(std::memory_order_relaxed);
    finished_waiters_.Reached(finished);
    room_waiters_.Reached(finished);
    if (holds_slot) slots_->Release();
  }
  absl::MutexLock lock(&mu_);
  worker_exited_ = true;
  t_current_worker = nullptr;
}

std::optional<openreg_status> Stream::Execute(WorkItem& item,
                                              bool* holds_slot) {
  if (item.needs_execution_slot()) {
    if (!slots_->AwaitGrant(&slot_request_)) return std::nullopt;
    *holds_slot = true;
  }
  if (!SleepUnlessStopped(delay_.Next())) return std::nullopt;
  // Times the item from here, once it can run, for its activity record.
  sim::ScopedActivity recorded(
      activity_, item.activity,
      sim::ActivityItem{item.activity_kind, device_, handle_, item.memcpy_kind,
                        item.bytes});
  switch (item.kind) {
    case WorkItem::Kind::kCompute:
      return item.compute();
    case WorkItem::Kind::kEventMarker:
      item.event->CompleteRecord(item.version);
      return OPENREG_SUCCESS;
    case WorkItem::Kind::kEventWait:
      // False only when a stop cancelled the event.
      if (!item.event->AwaitVersion(item.version)) return std::nullopt;
      return OPENREG_SUCCESS;
  }
  return OPENREG_ERROR_INTERNAL;
}

bool Stream::SleepUnlessStopped(absl::Duration delay) {
  if (delay <= absl::ZeroDuration()) return true;
  absl::MutexLock lock(&mu_);
  auto stopped = [this] { return stopping_.load(); };
  return !mu_.AwaitWithTimeout(absl::Condition(&stopped), delay);
}

}  // namespace openreg::threaded_sim
