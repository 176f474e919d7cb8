// An event: the completion state of its records.
//
// Note [Event versions]
// Every event_record bumps the event's version and enqueues a marker for that
// version on the stream; the version completes when its marker runs, which
// also takes the timestamp of a timing event. stream_wait_event captures the
// version that is latest at the time of the call and enqueues a wait for
// exactly that version, so re-recording the event later does not change what
// an earlier wait waits for, and markers of one event on several streams may
// complete in any order. event_query, event_synchronize and
// event_elapsed_time refer to the latest version.
//
// Ownership: shared by the event registry (while the handle is live) and by
// every queued marker and wait that refers to it.
// Thread-safety: all members may be called concurrently. mu_ guards the
// pending versions and the timestamp; latest_version_ and completed_through_
// are atomics written under mu_ and read without it, so that event_query and
// stream_wait_event of a completed record take no lock. CompleteRecord() runs
// on worker threads; AwaitVersion() blocks (on workers for stream waits, on API
// callers for event_synchronize).
#ifndef OPENREG_PLUGINS_THREADED_SIM_EVENT_H_
#define OPENREG_PLUGINS_THREADED_SIM_EVENT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "driver_abi/openreg_driver.h"

namespace openreg::threaded_sim {

class Event {
 public:
  Event(openreg_event handle, int32_t device, uint32_t flags);

  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  openreg_event handle() const { return handle_; }
  int32_t device() const { return device_; }
  bool timing() const { return (flags_ & OPENREG_EVENT_ENABLE_TIMING) != 0; }

  // event_record: makes a new version the latest and returns it (>= 1); the
  // caller enqueues its marker.
  uint64_t BeginRecord();
  // The marker of `version` ran: the version is complete and, if it is still
  // the latest and the event times, stamped with the current time.
  void CompleteRecord(uint64_t version);
  // The marker of `version` could not be enqueued: the version counts as
  // complete, without a timestamp, so nothing waits for it forever.
  void AbandonRecord(uint64_t version);

  // The latest version, or 0 if the event was never recorded.
  uint64_t LatestVersion() const;
  // True when `version` (0 included) has completed.
  bool IsComplete(uint64_t version) const;

  // Blocks until `version` completes (true) or Cancel() is called (false).
  bool AwaitVersion(uint64_t version);
  // Wakes every AwaitVersion() for good. For a stopped context: the markers
  // they wait for are dropped and will never run.
  void Cancel();

  // What event_elapsed_time needs to know about the latest record.
  struct LatestRecord {
    uint64_t version = 0;  // 0: never recorded
    bool complete = false;
    // When the marker ran; empty if it never ran (abandoned) or still runs.
    std::optional<std::chrono::steady_clock::time_point> completed_at;
  };
  LatestRecord Latest() const;

 private:
  void Finish(uint64_t version, bool stamp);
  bool IsCompleteLocked(uint64_t version) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const openreg_event handle_;
  const int32_t device_;
  const uint32_t flags_;
  mutable absl::Mutex mu_;
  std::atomic<uint64_t> latest_version_{0};
  // Every version up to this one has completed: the versions below the
  // oldest pending one, or all of them when none is pending.
  std::atomic<uint64_t> completed_through_{0};
  // Versions recorded whose marker has not run yet. A hash set, not a sorted
  // list: a stream may hold thousands of markers of one event, and their
  // completion in order must cost O(1) each.
  absl::flat_hash_set<uint64_t> pending_versions_ ABSL_GUARDED_BY(mu_);
  std::optional<std::chrono::steady_clock::time_point> latest_completed_at_
      ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_EVENT_H_
