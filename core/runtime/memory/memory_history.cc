#include "core/runtime/memory/memory_history.h"

#include <algorithm>

namespace openreg {

const char* TraceActionName(TraceAction action) {
  switch (action) {
    case TraceAction::kAlloc:
      return "alloc";
    case TraceAction::kFreeRequested:
      return "free_requested";
    case TraceAction::kFreeCompleted:
      return "free_completed";
    case TraceAction::kSegmentAlloc:
      return "segment_alloc";
    case TraceAction::kSegmentFree:
      return "segment_free";
    case TraceAction::kOom:
      return "oom";
    case TraceAction::kSnapshot:
      return "snapshot";
  }
  return "unknown";
}

namespace {

bool IsFree(TraceAction action) {
  return action == TraceAction::kFreeRequested ||
         action == TraceAction::kFreeCompleted ||
         action == TraceAction::kSegmentFree;
}

}  // namespace

void MemoryHistory::Enable(const HistorySettings& settings, Gatherer gatherer) {
  absl::MutexLock lock(&mutex_);
  if (settings.record_trace && !ring_.empty()) {
    // Keep the newest entries that fit the new bound, oldest first.
    std::rotate(ring_.begin(), ring_.begin() + next_, ring_.end());
    if (ring_.size() > settings.max_entries) {
      ring_.erase(ring_.begin(), ring_.end() - settings.max_entries);
    }
    next_ = ring_.size() % settings.max_entries;
  } else {
    ring_.clear();
    next_ = 0;
  }
  settings_ = settings;
  gatherer_ = std::make_shared<const Gatherer>(std::move(gatherer));
  enabled_.store(true, std::memory_order_relaxed);
}

void MemoryHistory::Disable() {
  absl::MutexLock lock(&mutex_);
  enabled_.store(false, std::memory_order_relaxed);
  settings_ = HistorySettings();
  gatherer_.reset();
  ring_.clear();
  next_ = 0;
}

HistoryContext MemoryHistory::Gather(int32_t device, bool for_free) const {
  std::shared_ptr<const Gatherer> gatherer;
  bool with_frames = false;
  {
    absl::MutexLock lock(&mutex_);
    if (gatherer_ == nullptr) return {};
    gatherer = gatherer_;
    with_frames = for_free ? settings_.context == ContextWhen::kAll
                           : settings_.context != ContextWhen::kNever;
  }
  return (*gatherer)(device, with_frames);
}

bool MemoryHistory::keeps_state_frames() const {
  absl::MutexLock lock(&mutex_);
  return settings_.context != ContextWhen::kNever;
}

void MemoryHistory::Record(TraceEntry entry) {
  absl::MutexLock lock(&mutex_);
  if (!settings_.record_trace ||
      (settings_.skipped_actions >> static_cast<int>(entry.action)) & 1) {
    return;
  }
  const ContextWhen needed =
      IsFree(entry.action) ? ContextWhen::kAll : ContextWhen::kAlloc;
  if (settings_.context < needed) entry.frames.reset();
  if (ring_.size() < settings_.max_entries) {
    ring_.push_back(std::move(entry));
    next_ = ring_.size() % settings_.max_entries;
    return;
  }
  ring_[next_] = std::move(entry);
  next_ = (next_ + 1) % settings_.max_entries;
}

std::vector<TraceEntry> MemoryHistory::Trace() const {
  absl::MutexLock lock(&mutex_);
  std::vector<TraceEntry> trace;
  trace.reserve(ring_.size());
  // Once full, next_ is the oldest entry; before, it is the end (or 0).
  const size_t start = ring_.size() < settings_.max_entries ? 0 : next_;
  for (size_t i = 0; i < ring_.size(); ++i) {
    trace.push_back(ring_[(start + i) % ring_.size()]);
  }
  return trace;
}

}  // namespace openreg
