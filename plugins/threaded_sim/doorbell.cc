#include "plugins/threaded_sim/doorbell.h"

#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace openreg::threaded_sim {

void Doorbell::Ring() {
  if (sleepers_.load() == 0) return;
  // Under the mutex: a sleeper holds it from its registration until it is
  // inside WaitWithDeadline, so the signal cannot fall between the two.
  absl::MutexLock lock(&mu_);
  rung_.SignalAll();
}

bool Doorbell::YieldAndCheckSpinOver(
    std::chrono::steady_clock::time_point start, absl::Duration spin) {
  std::this_thread::yield();
  return std::chrono::steady_clock::now() - start >=
         absl::ToChronoNanoseconds(spin);
}

void Doorbell::Pause() {
  // Tells the core this is a spin: the sibling hyperthread gets the pipeline
  // and leaving the loop does not pay a memory-order mis-speculation.
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace openreg::threaded_sim
