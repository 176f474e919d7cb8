#include "plugins/threaded_sim/event.h"

namespace openreg::threaded_sim {

Event::Event(openreg_event handle, int32_t device, uint32_t flags)
    : handle_(handle), device_(device), flags_(flags) {}

uint64_t Event::BeginRecord() {
  absl::MutexLock lock(&mu_);
  const uint64_t version = ++latest_version_;
  pending_versions_.insert(version);
  latest_completed_at_.reset();
  return version;
}

void Event::CompleteRecord(uint64_t version) { Finish(version, true); }

void Event::AbandonRecord(uint64_t version) { Finish(version, false); }

void Event::Finish(uint64_t version, bool stamp) {
  // Read the clock before locking, so contention does not skew timings.
  const auto now = std::chrono::steady_clock::now();
  absl::MutexLock lock(&mu_);
  pending_versions_.erase(version);
  if (stamp && version == latest_version_ && timing()) {
    latest_completed_at_ = now;
  }
}

uint64_t Event::LatestVersion() const {
  absl::MutexLock lock(&mu_);
  return latest_version_;
}

bool Event::IsComplete(uint64_t version) const {
  absl::MutexLock lock(&mu_);
  return IsCompleteLocked(version);
}

bool Event::IsCompleteLocked(uint64_t version) const {
  return !pending_versions_.contains(version);
}

bool Event::AwaitVersion(uint64_t version) {
  absl::MutexLock lock(&mu_);
  auto done = [this, version]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return IsCompleteLocked(version) || cancelled_;
  };
  mu_.Await(absl::Condition(&done));
  return IsCompleteLocked(version);
}

void Event::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
}

Event::LatestRecord Event::Latest() const {
  absl::MutexLock lock(&mu_);
  return LatestRecord{latest_version_, IsCompleteLocked(latest_version_),
                      latest_completed_at_};
}

}  // namespace openreg::threaded_sim
