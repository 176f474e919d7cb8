// How much enqueued work of each device has not run yet, for the allocator's
// out-of-memory path: it waits for that work, which owns memory, without
// consuming sticky failures (core/torch_runtime/stream_work.h).
//
// Two counters per device rather than one count in flight: launching threads
// add to one and the driver's threads to the other, each on a cache line of
// its own, so a launch and its run never write the same line. One shared
// count passed its line from the launching core to the driver's worker and
// back on every op of an asynchronous driver (docs/performance.md).
//
// Thread-safety: every member may be called from any thread.
#ifndef OPENREG_CORE_RUNTIME_IN_FLIGHT_WORK_H_
#define OPENREG_CORE_RUNTIME_IN_FLIGHT_WORK_H_

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/synchronization/mutex.h"
#include "core/runtime/runtime_config.h"

namespace openreg {

class InFlightWork {
 public:
  // Before each launch on `device`.
  void Launched(int device) { launched_[device].count.fetch_add(1); }

  // After each run of launched work on `device`, or its refusal. The mutex is
  // taken only when someone waits (the out-of-memory path); on a synchronous
  // driver every op would otherwise lock it.
  void Done(int device) {
    completed_[device].count.fetch_add(1);
    if (waiters_.load() > 0) {
      // Releasing the mutex makes waiters re-check their condition; taking
      // it after the increment means none misses the change. A waiter that
      // registers after the load above finds the work done already (both
      // are sequentially consistent).
      absl::MutexLock lock(&mutex_);
    }
  }

  // Waits until nothing launched on `device` is left to run, so that all the
  // work launched before the call has run. A count of runs alone cannot tell
  // that: work other threads launch meanwhile on another stream may finish
  // first and make up the number while earlier work still runs. Completed is
  // read before launched: every run follows its launch, so if the completions
  // seen then reach the launches seen after, none was in flight at the first
  // read.
  void AwaitNoneInFlight(int device) {
    const std::atomic<uint64_t>* completed = &completed_[device].count;
    const std::atomic<uint64_t>* launched = &launched_[device].count;
    waiters_.fetch_add(1);
    {
      auto none = [completed, launched] {
        const uint64_t done = completed->load();
        return done >= launched->load();
      };
      absl::MutexLock lock(&mutex_, absl::Condition(&none));
    }
    waiters_.fetch_sub(1);
  }

  // How many threads are in AwaitNoneInFlight.
  int waiters() const { return waiters_.load(); }

 private:
  struct alignas(64) Counter {
    std::atomic<uint64_t> count{0};
  };
  absl::Mutex mutex_;
  std::atomic<int> waiters_{0};
  std::array<Counter, kMaxDeviceCount> launched_{};
  std::array<Counter, kMaxDeviceCount> completed_{};
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_IN_FLIGHT_WORK_H_
