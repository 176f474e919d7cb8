// A doorbell: how a thread waits for a condition that other threads make
// true, paying for a kernel wake-up only when the waiter is really asleep.
//
// Note [Doorbells]
// Handing an op to a stream's worker used to wake the worker through a futex
// on every op (the worker slept in absl::Mutex::Await on the stream's mutex,
// so every enqueue's unlock evaluated its condition and woke it), and a
// synchronize slept the same way while the op finished a microsecond later.
// On a virtual machine a wake-up costs microseconds on both sides and
// tens of microseconds when the other core is idle. GPU runtimes avoid this
// with a doorbell: the producer writes the command, then rings only if the
// consumer is asleep; the consumer polls briefly before it goes to sleep.
//
// Here: Wait() first spins, checking `ready` between pause instructions, for
// at most `spin` (bounded, so a shared core is given back soon), and yields
// the core every kSpinsPerYield pauses, so that on an oversubscribed machine
// the thread it waits for (maybe runnable on this very core) gets to run;
// then it
// registers as a sleeper and sleeps on a condition variable. Ring() reads the
// sleeper count and touches the mutex only when it is not zero, so a ring
// that nobody waits for is one atomic load.
//
// No lost wake-up: the state `ready` reads must be std::atomic and written
// with seq_cst stores (the default) before Ring(); Ring() reads the sleeper
// count with seq_cst and the sleeper increments it with seq_cst before it
// evaluates `ready` a last time. In the single order of seq_cst operations,
// either the ringer's read comes after the increment (it sees the sleeper
// and signals under the mutex, which the sleeper holds from its increment
// until it waits), or the increment comes after the state was written (the
// sleeper's last evaluation of `ready` sees it and it does not sleep).
//
// Thread-safety: all members may be called concurrently by any number of
// ringers and waiters. mu_ guards nothing but the sleep itself (it pairs with
// rung_); sleepers_ is atomic.
#ifndef OPENREG_PLUGINS_THREADED_SIM_DOORBELL_H_
#define OPENREG_PLUGINS_THREADED_SIM_DOORBELL_H_

#include <atomic>
#include <chrono>
#include <cstdint>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace openreg::threaded_sim {

class Doorbell {
 public:
  Doorbell() = default;
  Doorbell(const Doorbell&) = delete;
  Doorbell& operator=(const Doorbell&) = delete;

  // Wakes every thread sleeping in Wait(), if there is any.
  void Ring();

  // Returns true once `ready()` is true, or false once `timeout` has passed
  // without it (an infinite `timeout` never passes). Spins for at most `spin`
  // before it sleeps. `ready` must be cheap and must read only atomics.
  // Stores in `*slept` (when not null) how long it slept: zero when the
  // condition came true while it spun.
  template <typename Ready>
  bool Wait(const Ready& ready, absl::Duration spin, absl::Duration timeout,
            absl::Duration* slept = nullptr);

  // Threads asleep in Wait(); for tests.
  int32_t sleepers() const { return sleepers_.load(); }

 private:
  // Gives the core to another runnable thread, if any, then tells whether
  // the spin of a Wait() that started at `start` is over.
  static bool YieldAndCheckSpinOver(std::chrono::steady_clock::time_point start,
                                    absl::Duration spin);
  static void Pause();
  // About a microsecond of pauses.
  static constexpr int kSpinsPerYield = 32;

  std::atomic<int32_t> sleepers_{0};
  absl::Mutex mu_;
  absl::CondVar rung_;
};

template <typename Ready>
bool Doorbell::Wait(const Ready& ready, absl::Duration spin,
                    absl::Duration timeout, absl::Duration* slept) {
  if (slept != nullptr) *slept = absl::ZeroDuration();
  if (ready()) return true;
  if (spin > absl::ZeroDuration()) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 1;; ++i) {
      Pause();
      if (ready()) return true;
      if (i % kSpinsPerYield == 0 && YieldAndCheckSpinOver(start, spin)) {
        break;
      }
    }
  }
  const absl::Time asleep_at = absl::Now();
  const absl::Time deadline = asleep_at + timeout;
  absl::MutexLock lock(&mu_);
  sleepers_.fetch_add(1);
  bool result = ready();
  while (!result) {
    const bool timed_out = rung_.WaitWithDeadline(&mu_, deadline);
    result = ready();
    if (timed_out) break;
  }
  sleepers_.fetch_sub(1);
  if (slept != nullptr) *slept = absl::Now() - asleep_at;
  return result;
}

// How long one waiter polls, learnt from its waits: as long as `max` while
// what it waits for keeps arriving within a poll or soon after it gave up,
// halving after each sleep longer than `max`, and not at all once that fell
// below max / 8. So a worker fed by a loop of tiny ops polls, and one whose
// work comes in bursts with long gaps does not spend a core at every gap.
// Thread-safety: none; belongs to one waiting thread.
class AdaptiveSpin {
 public:
  explicit AdaptiveSpin(absl::Duration max) : max_(max), current_(max) {}

  absl::Duration current() const { return current_; }

  // After a Doorbell::Wait() with current(): it slept for `slept`.
  void Record(absl::Duration slept) {
    if (slept <= max_) {
      current_ = max_;
      return;
    }
    current_ /= 2;
    if (current_ < max_ / 8) current_ = absl::ZeroDuration();
  }

 private:
  const absl::Duration max_;
  absl::Duration current_;
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_DOORBELL_H_
