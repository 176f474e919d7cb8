#include "plugins/threaded_sim/counter_bell.h"

namespace openreg::threaded_sim {

void CounterBell::StandFor(uint64_t target) {
  uint64_t lowest = lowest_target_.load();
  while (target < lowest &&
         !lowest_target_.compare_exchange_weak(lowest, target)) {
  }
}

void CounterBell::Reached(uint64_t count) {
  if (count < lowest_target_.load()) return;
  // Cleared before the ring, whatever a waiter stood for meanwhile: every
  // waiter the ring finds asleep stands again when it wakes (Note [Counter
  // bells]).
  lowest_target_.store(kNoTarget);
  bell_.Ring();
}

}  // namespace openreg::threaded_sim
