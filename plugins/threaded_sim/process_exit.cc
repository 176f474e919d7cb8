#include "plugins/threaded_sim/process_exit.h"

#include <cstdlib>
#include <memory>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "plugins/sim_support/context_registry.h"
#include "plugins/threaded_sim/driver_state.h"

namespace openreg::threaded_sim {
namespace {

ABSL_CONST_INIT absl::once_flag g_exit_hook_once;

void StopEveryContext() {
  // The states stay in the closed registry, never freed: threads that are
  // not ours may still be inside a driver call, using device memory, while
  // the process exits.
  const std::vector<std::shared_ptr<sim::SimState>> states =
      sim::CloseRegistryForExit();
  // Every context stops taking work before any is waited for, so no queued
  // item of one runs while exit waits for another.
  for (const std::shared_ptr<sim::SimState>& state : states) {
    static_cast<DriverState&>(*state).Stop();
  }
  const absl::Time deadline = absl::Now() + kWorkerJoinTimeout;
  for (const std::shared_ptr<sim::SimState>& state : states) {
    static_cast<DriverState&>(*state).Join(deadline);
  }
}

}  // namespace

void StopWorkersAtProcessExit() {
  // Process-wide, so a forked child (which inherits the registration, this
  // flag included) does not register it twice.
  absl::call_once(g_exit_hook_once, [] { std::atexit(StopEveryContext); });
}

}  // namespace openreg::threaded_sim
