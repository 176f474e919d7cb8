// Activity recording (ABI 2.2) for the simulated drivers: the sink that
// activity_enable sets, the correlation ids that activity_set_correlation_id
// sets per thread, and the clock records are stamped with.
//
// Note [Recording costs one check per item when off]
// An enqueueing call asks Tag() once: one relaxed load of `enabled_` when no
// sink is set. Only a tagged item reads the clock and delivers a record when
// it has run, so untagged items (everything while no profiler runs) pay
// nothing else. An item enqueued while off stays untagged even if recording
// starts before it runs, as the ABI allows.
//
// Ownership: one recorder per context (owned by sim::SimState); the sink's
// user_data belongs to the caller of activity_enable.
// Thread-safety: every method may be called concurrently. mu_ guards the
// sink: Deliver() holds it shared while it calls the sink, SetSink() holds it
// exclusively, so when SetSink() returns no call of the old sink is running
// (the ABI's promise to the caller, who may then free user_data).
// Correlation ids live in thread-local storage keyed by the recorder's serial
// number, which is never reused, so a thread's id for a destroyed context
// never leaks into a new one at the same address.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_ACTIVITY_RECORDER_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_ACTIVITY_RECORDER_H_

#include <atomic>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "driver_abi/openreg_driver.h"

namespace openreg::sim {

// What an enqueueing call learns about its item: whether to record it, and
// with which correlation id.
struct ActivityTag {
  bool recorded = false;
  uint64_t correlation_id = 0;
};

// What the item was, for its record.
struct ActivityItem {
  int32_t kind;  // OPENREG_ACTIVITY_*
  int32_t device;
  openreg_stream stream;
  int32_t memcpy_kind = -1;  // OPENREG_MEMCPY_* for copies
  uint64_t bytes = 0;        // for copies and memsets
};

class ActivityRecorder {
 public:
  ActivityRecorder();

  // activity_enable: `fn` NULL stops recording.
  void SetSink(openreg_activity_fn fn, void* user_data);

  // activity_set_correlation_id, for the calling thread.
  void SetCorrelationId(uint64_t correlation_id);

  // Note [Recording costs one check per item when off].
  ActivityTag Tag() const {
    if (!enabled_.load(std::memory_order_relaxed)) return ActivityTag{};
    return ActivityTag{true, CorrelationId()};
  }

  // Reports `item`, which ran from `start_ns` to `end_ns`, to the sink, if
  // one is still set.
  void Deliver(const ActivityTag& tag, const ActivityItem& item,
               uint64_t start_ns, uint64_t end_ns);

  // The clock of activity_get_timestamp and of every record: steady, in
  // nanoseconds.
  static uint64_t Now();

 private:
  uint64_t CorrelationId() const;

  const uint64_t serial_;
  std::atomic<bool> enabled_{false};
  absl::Mutex mu_;
  openreg_activity_fn fn_ ABSL_GUARDED_BY(mu_) = nullptr;
  void* user_data_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// Times one item: reads the clock at construction and, at destruction,
// delivers the record, when the item is tagged; otherwise does nothing.
class ScopedActivity {
 public:
  ScopedActivity(ActivityRecorder* recorder, const ActivityTag& tag,
                 const ActivityItem& item)
      : recorder_(recorder),
        tag_(tag),
        item_(item),
        start_ns_(tag.recorded ? ActivityRecorder::Now() : 0) {}
  ~ScopedActivity() {
    if (tag_.recorded) {
      recorder_->Deliver(tag_, item_, start_ns_, ActivityRecorder::Now());
    }
  }
  ScopedActivity(const ScopedActivity&) = delete;
  ScopedActivity& operator=(const ScopedActivity&) = delete;

 private:
  ActivityRecorder* const recorder_;
  const ActivityTag tag_;
  const ActivityItem item_;
  const uint64_t start_ns_;
};

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_ACTIVITY_RECORDER_H_
