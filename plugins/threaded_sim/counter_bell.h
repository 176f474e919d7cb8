// A doorbell for threads that wait for a growing counter to reach a target:
// a stream's finished-item count, which a synchronize and a producer waiting
// for room in a full queue both wait on.
//
// Note [Counter bells]
// Ringing a plain Doorbell after every finished item woke every sleeping
// synchronizer once per item: each woke, found its item not yet reached and
// slept again. A training step on threaded_sim queues hundreds of kernels
// ahead of its synchronize, so the host thread woke hundreds of times per
// step, each time taking a core from the worker's OpenMP team, whose other
// members then waited for it at the region's barrier (the small ResNet's step
// lost about a tenth of its time that way). A GPU's host waits on a fence
// value instead: it sleeps until the counter it names passes, and the device
// signals only then. Here each waiter stands for its target (the bell keeps
// the lowest of all standing targets), and the counter's writer rings only
// once the counter reaches that lowest target. Waiters whose target is
// further away wake with it, stand again and go back to sleep.
//
// No lost wake-up: every evaluation of a waiter's condition that is not yet
// met stands for its target and then reads the counter again; the writer stores the counter and
// then reads the lowest target (all seq_cst). In their single order either
// the writer sees the target (and rings, through Doorbell's own guarantee)
// or the waiter sees the new count (and does not sleep). The writer clears
// the lowest target before it rings, unconditionally: a waiter whose stand
// that clears was already asleep is woken by that very ring and stands
// again; one still evaluating stands again before it sleeps.
//
// Thread-safety: any number of waiters; Reached() may be called by any
// number of threads, each after storing the counter.
#ifndef OPENREG_PLUGINS_THREADED_SIM_COUNTER_BELL_H_
#define OPENREG_PLUGINS_THREADED_SIM_COUNTER_BELL_H_

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "plugins/threaded_sim/doorbell.h"

namespace openreg::threaded_sim {

class CounterBell {
 public:
  CounterBell() = default;
  CounterBell(const CounterBell&) = delete;
  CounterBell& operator=(const CounterBell&) = delete;

  // Returns true once `counter` >= `target`, or false once `stopped()` is
  // true first. Polls for at most `spin` before it sleeps (Doorbell::Wait).
  // `stopped` must be cheap and read only atomics written with seq_cst
  // before RingAll().
  template <typename Stopped>
  bool Wait(const std::atomic<uint64_t>& counter, uint64_t target,
            const Stopped& stopped, absl::Duration spin);

  // Called after storing `count` into the counter (seq_cst): wakes the
  // waiters once it reaches the lowest target one of them stands for.
  void Reached(uint64_t count);

  // Wakes every waiter, whatever it waits for (the stream stops).
  void RingAll() { bell_.Ring(); }

  // The lowest target a waiter stands for, or kNoTarget; for tests.
  static constexpr uint64_t kNoTarget = ~uint64_t{0};
  uint64_t lowest_target() const { return lowest_target_.load(); }
  // Threads asleep in Wait(); for tests.
  int32_t sleepers() const { return bell_.sleepers(); }

 private:
  // Lowers lowest_target_ to `target` if it is above.
  void StandFor(uint64_t target);

  std::atomic<uint64_t> lowest_target_{kNoTarget};
  Doorbell bell_;
};

template <typename Stopped>
bool CounterBell::Wait(const std::atomic<uint64_t>& counter, uint64_t target,
                       const Stopped& stopped, absl::Duration spin) {
  auto reached_or_stopped = [&] {
    // A waiter that is done leaves no stand behind to ring for.
    if (counter.load() >= target) return true;
    StandFor(target);
    return counter.load() >= target || stopped();
  };
  bell_.Wait(reached_or_stopped, spin, absl::InfiniteDuration());
  return counter.load() >= target;
}

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_COUNTER_BELL_H_
