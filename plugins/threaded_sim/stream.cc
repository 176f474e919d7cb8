#include "plugins/threaded_sim/stream.h"

#include <pthread.h>

#include <system_error>
#include <utility>

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"
#include "third_party/openmp/thread_workers.h"

namespace openreg::threaded_sim {

using sim::Fail;
using sim::StatusName;

namespace {

// Set for the lifetime of a worker thread's loop.
thread_local const Stream* t_current_worker = nullptr;

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
               ExecutionSlots* slots, AdversarialDelay delay,
               absl::Duration idle_release_delay)
    : handle_(handle),
      device_(device),
      priority_(priority),
      slots_(slots),
      delay_(delay),
      idle_release_delay_(idle_release_delay) {}

// worker_ is joined or was never started (Join's contract); a joinable
// std::thread here would terminate the process, which is the right outcome
// for that broken invariant.
Stream::~Stream() = default;

const Stream* Stream::CurrentWorker() { return t_current_worker; }

std::string Stream::Describe() const {
  return absl::StrFormat("stream %p (device %d, priority %d)", handle_,
                         device_, priority_);
}

openreg_status Stream::Enqueue(WorkItem item, const char* function,
                               uint64_t* ticket) {
  absl::MutexLock lock(&mu_);
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
  queue_.push_back(std::move(item));
  const uint64_t number = ++enqueued_;
  if (queue_.size() == 1) RequestSlotForHead();
  if (ticket != nullptr) *ticket = number;
  return OPENREG_SUCCESS;
}

void Stream::RequestSlotForHead() {
  if (!busy_ && !queue_.empty() && queue_.front().needs_execution_slot()) {
    slots_->Request(&slot_request_, priority_);
  }
}

uint64_t Stream::enqueued() const {
  absl::MutexLock lock(&mu_);
  return enqueued_;
}

bool Stream::AwaitFinished(uint64_t ticket) {
  absl::MutexLock lock(&mu_);
  auto done = [this, ticket]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return finished_ >= ticket || stopping_;
  };
  mu_.Await(absl::Condition(&done));
  return finished_ >= ticket;
}

openreg_status Stream::Query(const char* function) {
  std::optional<AsyncFailure> failure;
  {
    absl::MutexLock lock(&mu_);
    failure = std::exchange(failure_, std::nullopt);
    if (!failure.has_value()) {
      return finished_ == enqueued_ ? OPENREG_SUCCESS
                                    : OPENREG_ERROR_NOT_READY;
    }
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
  absl::MutexLock lock(&mu_);
  return std::exchange(failure_, std::nullopt);
}

void Stream::RequestDestroy() {
  absl::MutexLock lock(&mu_);
  destroy_requested_ = true;
}

bool Stream::Retired() const {
  absl::MutexLock lock(&mu_);
  return destroy_requested_ && (!worker_started_ || worker_exited_);
}

std::vector<std::shared_ptr<Event>> Stream::Stop() {
  std::deque<WorkItem> dropped;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  std::vector<std::shared_ptr<Event>> orphaned_events;
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

bool Stream::HasWorkOrMustExit() const {
  return !queue_.empty() || stopping_ || destroy_requested_;
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
  while (true) {
    WorkItem item;
    {
      absl::MutexLock lock(&mu_);
      if (may_own_host_workers &&
          !mu_.AwaitWithTimeout(absl::Condition(this, &Stream::HasWorkOrMustExit),
                                idle_release_delay_)) {
        // Outside the lock: the release joins the OpenMP workers.
        mu_.Unlock();
        openmp::ReleaseCallingThreadWorkers();
        may_own_host_workers = false;
        mu_.Lock();
      }
      mu_.Await(absl::Condition(this, &Stream::HasWorkOrMustExit));
      // Exit once stopped, or once a destroyed stream has drained.
      if (stopping_ || queue_.empty()) break;
      item = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    bool holds_slot = false;
    may_own_host_workers |= item.kind == WorkItem::Kind::kCompute;
    const std::optional<openreg_status> status = Execute(item, &holds_slot);
    {
      absl::MutexLock lock(&mu_);
      busy_ = false;
      if (status.has_value()) {
        const uint64_t number = ++finished_;
        if (*status != OPENREG_SUCCESS) {
          if (failure_.has_value()) {
            ++failure_->later_failures;
          } else {
            failure_ = AsyncFailure{handle_, item.description, *status,
                                    number, 0};
          }
        }
        // Before releasing the slot, so that the next item competes for it
        // with everything already waiting.
        if (!stopping_) RequestSlotForHead();
      }
    }
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
  return !mu_.AwaitWithTimeout(absl::Condition(&stopping_), delay);
}

}  // namespace openreg::threaded_sim
