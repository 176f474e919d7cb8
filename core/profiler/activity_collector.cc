#include "core/profiler/activity_collector.h"

#include <chrono>
#include <cstring>
#include <utility>

namespace openreg::profiler {

namespace {

int64_t SystemNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::Status ActivityCollector::Start() {
  // The driver's clock read between two reads of ours: its time corresponds
  // to their midpoint, to within half the interval (a few hundred ns).
  const int64_t before = SystemNowNs();
  absl::StatusOr<uint64_t> driver_now = driver_.ActivityTimestamp();
  const int64_t after = SystemNowNs();
  if (!driver_now.ok()) return driver_now.status();
  clock_offset_ns_ =
      before + (after - before) / 2 - static_cast<int64_t>(*driver_now);
  return driver_.SetActivitySink(&ActivityCollector::Receive, this);
}

absl::Status ActivityCollector::Stop() {
  return driver_.SetActivitySink(nullptr, nullptr);
}

void ActivityCollector::Receive(void* user_data,
                                const openreg_activity_record* record) {
  auto* self = static_cast<ActivityCollector*>(user_data);
  // A driver of a later minor version may send a longer record; one that
  // sends a shorter one than 2.2's is broken, and its record is dropped
  // rather than read past its end.
  if (record == nullptr ||
      record->struct_size < OPENREG_ACTIVITY_RECORD_STRUCT_SIZE_V2_2) {
    return;
  }
  openreg_activity_record copy;
  std::memcpy(&copy, record, sizeof(copy));
  absl::MutexLock lock(&self->mu_);
  self->records_.push_back(copy);
}

std::vector<DeviceActivity> ActivityCollector::Take() {
  std::vector<openreg_activity_record> records;
  {
    absl::MutexLock lock(&mu_);
    records = std::exchange(records_, {});
  }
  std::vector<DeviceActivity> activities;
  activities.reserve(records.size());
  for (const openreg_activity_record& r : records) {
    activities.push_back(
        DeviceActivity{r.kind, r.device, r.stream,
                       static_cast<int64_t>(r.start_ns) + clock_offset_ns_,
                       static_cast<int64_t>(r.end_ns) + clock_offset_ns_,
                       r.correlation_id, r.memcpy_kind, r.bytes});
  }
  return activities;
}

}  // namespace openreg::profiler
