#include "plugins/threaded_sim/execution_slots.h"

namespace openreg::threaded_sim {

ExecutionSlots::ExecutionSlots(int32_t count) : count_(count), free_(count) {}

bool ExecutionSlots::TakeFree() {
  int32_t free = free_.load();
  while (free > 0) {
    if (free_.compare_exchange_weak(free, free - 1)) return true;
  }
  return false;
}

void ExecutionSlots::Request(SlotRequest* request, int32_t priority) {
  // Nobody waits: a free slot is this request's, whatever its priority.
  if (waiting_count_.load() == 0 && !cancelled_.load() && TakeFree()) {
    request->granted_.store(true);
    return;
  }
  absl::MutexLock lock(&mu_);
  request->granted_.store(false);
  waiting_.emplace(std::make_pair(priority, next_ticket_++), request);
  waiting_count_.store(waiting_.size());
  GrantWhileFree();
}

bool ExecutionSlots::AwaitGrant(SlotRequest* request) {
  if (request->granted_.exchange(false)) return true;
  absl::MutexLock lock(&mu_);
  auto decided = [this, request]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return request->granted_.load() || cancelled_.load();
  };
  mu_.Await(absl::Condition(&decided));
  return request->granted_.exchange(false);
}

void ExecutionSlots::Release() {
  free_.fetch_add(1);
  if (waiting_count_.load() == 0) return;
  absl::MutexLock lock(&mu_);
  GrantWhileFree();
}

void ExecutionSlots::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_.store(true);
  waiting_.clear();
  waiting_count_.store(0);
}

void ExecutionSlots::GrantWhileFree() {
  while (!waiting_.empty() && !cancelled_.load() && TakeFree()) {
    auto best = waiting_.begin();
    best->second->granted_.store(true);
    waiting_.erase(best);
    waiting_count_.store(waiting_.size());
  }
}

}  // namespace openreg::threaded_sim
