#include "plugins/threaded_sim/execution_slots.h"

namespace openreg::threaded_sim {

ExecutionSlots::ExecutionSlots(int32_t count) : count_(count), free_(count) {}

void ExecutionSlots::Request(SlotRequest* request, int32_t priority) {
  absl::MutexLock lock(&mu_);
  request->granted_ = false;
  waiting_.emplace(std::make_pair(priority, next_ticket_++), request);
  GrantWhileFree();
}

bool ExecutionSlots::AwaitGrant(SlotRequest* request) {
  absl::MutexLock lock(&mu_);
  auto decided = [this, request]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return request->granted_ || cancelled_;
  };
  mu_.Await(absl::Condition(&decided));
  const bool granted = request->granted_;
  request->granted_ = false;
  return granted;
}

void ExecutionSlots::Release() {
  absl::MutexLock lock(&mu_);
  ++free_;
  GrantWhileFree();
}

void ExecutionSlots::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  waiting_.clear();
}

void ExecutionSlots::GrantWhileFree() {
  while (free_ > 0 && !waiting_.empty() && !cancelled_) {
    auto best = waiting_.begin();
    best->second->granted_ = true;
    waiting_.erase(best);
    --free_;
  }
}

}  // namespace openreg::threaded_sim
