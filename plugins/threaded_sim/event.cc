#include "plugins/threaded_sim/event.h"

namespace openreg::threaded_sim {

Event::Event(openreg_event handle, int32_t device, uint32_t flags)
    : handle_(handle), device_(device), flags_(flags) {}

uint64_t Event::BeginRecord() {
  absl::MutexLock lock(&mu_);
  const uint64_t version = latest_version_.load() + 1;
  pending_versions_.insert(version);
  latest_version_.store(version);
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
  // Advance past the versions now complete. Each version is stepped over
  // once, so this is O(1) amortized per record.
  uint64_t completed_through = completed_through_.load();
  const uint64_t latest = latest_version_.load();
  while (completed_through < latest &&
         !pending_versions_.contains(completed_through + 1)) {
    ++completed_through;
  }
  completed_through_.store(completed_through);
  if (stamp && version == latest_version_.load() && timing()) {
    latest_completed_at_ = now;
  }
}

uint64_t Event::LatestVersion() const { return latest_version_.load(); }

bool Event::IsComplete(uint64_t version) const {
  const uint64_t completed_through = completed_through_.load();
  if (version <= completed_through) return true;
  // The oldest pending version when we read completed_through_ (it only
  // grows): pending at that moment, so NOT_READY is a true answer. Only a
  // newer version (records on several streams) needs the list.
  if (version == completed_through + 1) return false;
  absl::MutexLock lock(&mu_);
  return IsCompleteLocked(version);
}

bool Event::IsCompleteLocked(uint64_t version) const {
  return !pending_versions_.contains(version);
}

bool Event::AwaitVersion(uint64_t version) {
  if (version <= completed_through_.load()) return true;
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
  const uint64_t latest = latest_version_.load();
  return LatestRecord{latest, IsCompleteLocked(latest), latest_completed_at_};
}

}  // namespace openreg::threaded_sim
