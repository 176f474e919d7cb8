// Collects the driver's activity records (ABI 2.2) while a profiler runs and
// places them on the profiler's clock.
//
// The driver calls Receive() from its own threads as items finish; the
// records wait here until the profiler stops and takes them. Times are
// converted once, at Take(), with the offset between the profiler's clock
// (the system clock in ns since the epoch, as Kineto's) and the driver's,
// sampled when recording starts.
//
// Ownership: the collector owns the records; it must outlive recording
// (Stop() returns only when no call of Receive() runs, the ABI's promise).
// Thread-safety: Receive() runs on driver threads, concurrently with itself;
// mu_ guards the records. Start(), Stop() and Take() are called by the
// profiler's thread, one at a time.
#ifndef OPENREG_CORE_PROFILER_ACTIVITY_COLLECTOR_H_
#define OPENREG_CORE_PROFILER_ACTIVITY_COLLECTOR_H_

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "core/driver/driver.h"
#include "driver_abi/openreg_driver.h"

namespace openreg::profiler {

// One record, its times in ns on the profiler's clock.
struct DeviceActivity {
  int32_t kind;  // OPENREG_ACTIVITY_*
  int32_t device;
  openreg_stream stream;
  int64_t start_ns;
  int64_t end_ns;
  uint64_t correlation_id;
  int32_t memcpy_kind;  // OPENREG_MEMCPY_*, or -1
  uint64_t bytes;
};

class ActivityCollector {
 public:
  // `driver` must have activity recording (Driver::has_activity_recording).
  explicit ActivityCollector(const Driver& driver) : driver_(driver) {}
  ActivityCollector(const ActivityCollector&) = delete;
  ActivityCollector& operator=(const ActivityCollector&) = delete;

  // Samples the two clocks and makes this the driver's sink.
  absl::Status Start();
  // Stops the driver's reporting; no Receive() runs once it returns.
  absl::Status Stop();
  // The records received so far, converted, in the order they arrived.
  std::vector<DeviceActivity> Take();

  // The driver's sink (openreg_activity_fn); `user_data` is the collector.
  static void Receive(void* user_data, const openreg_activity_record* record);

 private:
  const Driver& driver_;
  // Profiler clock minus driver clock; written by Start() before the sink is
  // set, read by Take() after it was removed.
  int64_t clock_offset_ns_ = 0;
  absl::Mutex mu_;
  std::vector<openreg_activity_record> records_ ABSL_GUARDED_BY(mu_);
};

}  // namespace openreg::profiler

#endif  // OPENREG_CORE_PROFILER_ACTIVITY_COLLECTOR_H_
