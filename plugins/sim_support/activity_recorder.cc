#include "plugins/sim_support/activity_recorder.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace openreg::sim {

namespace {

// Serial numbers of recorders, never reused (see activity_recorder.h).
std::atomic<uint64_t> g_next_serial{1};

// The calling thread's non-zero correlation ids, one per recorder that has
// one. A thread sets ids for very few contexts, so a vector searched
// linearly beats a map; an id set back to 0 is removed, so it stays small.
struct ThreadCorrelation {
  uint64_t recorder_serial;
  uint64_t correlation_id;
};
thread_local std::vector<ThreadCorrelation> t_correlation_ids;

}  // namespace

ActivityRecorder::ActivityRecorder()
    : serial_(g_next_serial.fetch_add(1, std::memory_order_relaxed)) {}

void ActivityRecorder::SetSink(openreg_activity_fn fn, void* user_data) {
  absl::MutexLock lock(&mu_);
  fn_ = fn;
  user_data_ = user_data;
  enabled_.store(fn != nullptr, std::memory_order_relaxed);
}

void ActivityRecorder::SetCorrelationId(uint64_t correlation_id) {
  auto mine = std::find_if(t_correlation_ids.begin(), t_correlation_ids.end(),
                           [this](const ThreadCorrelation& c) {
                             return c.recorder_serial == serial_;
                           });
  if (correlation_id == 0) {
    if (mine != t_correlation_ids.end()) t_correlation_ids.erase(mine);
  } else if (mine != t_correlation_ids.end()) {
    mine->correlation_id = correlation_id;
  } else {
    t_correlation_ids.push_back({serial_, correlation_id});
  }
}

uint64_t ActivityRecorder::CorrelationId() const {
  for (const ThreadCorrelation& c : t_correlation_ids) {
    if (c.recorder_serial == serial_) return c.correlation_id;
  }
  return 0;
}

void ActivityRecorder::Deliver(const ActivityTag& tag, const ActivityItem& item,
                               uint64_t start_ns, uint64_t end_ns) {
  openreg_activity_record record{};
  record.struct_size = OPENREG_ACTIVITY_RECORD_STRUCT_SIZE_V2_2;
  record.kind = item.kind;
  record.device = item.device;
  record.stream = item.stream;
  record.start_ns = start_ns;
  record.end_ns = end_ns;
  record.correlation_id = tag.correlation_id;
  record.memcpy_kind = item.memcpy_kind;
  record.bytes = item.bytes;
  absl::ReaderMutexLock lock(&mu_);
  if (fn_ != nullptr) fn_(user_data_, &record);
}

uint64_t ActivityRecorder::Now() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

}  // namespace openreg::sim
