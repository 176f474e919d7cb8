#include "plugins/cpu_sim/driver_state.h"

#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/const_init.h"
#include "absl/base/thread_annotations.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "plugins/sim_support/error.h"

namespace openreg::cpu_sim {

using sim::Fail;

namespace {

ABSL_CONST_INIT absl::Mutex g_state_mu(absl::kConstInit);
// Destroyed when the library is unloaded, which frees the memory of a driver
// that was never shut down.
std::shared_ptr<DriverState> g_state ABSL_GUARDED_BY(g_state_mu);

}  // namespace

DriverState::DriverState(const sim::SimConfig& config)
    : SimState(config.device_count, config.device_memory_bytes,
               kStreamPriorities) {}

openreg_status InstallState(std::shared_ptr<DriverState> state) {
  absl::MutexLock lock(&g_state_mu);
  if (g_state != nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "init: the driver is already initialized; call shutdown "
                "before initializing it again");
  }
  g_state = std::move(state);
  return OPENREG_SUCCESS;
}

std::shared_ptr<DriverState> ReleaseState() {
  absl::MutexLock lock(&g_state_mu);
  return std::exchange(g_state, nullptr);
}

std::shared_ptr<DriverState> AcquireState(const char* function) {
  std::shared_ptr<DriverState> state;
  {
    // Shared: calls only copy the pointer, so they need not serialize.
    absl::ReaderMutexLock lock(&g_state_mu);
    state = g_state;
  }
  if (state == nullptr) {
    Fail(OPENREG_ERROR_NOT_INITIALIZED,
         absl::StrFormat("%s: the driver is not initialized; call init first "
                         "(or again after shutdown)",
                         function));
  }
  return state;
}

}  // namespace openreg::cpu_sim

// Declared by plugins/sim_support/sim_state.h; each driver defines it once.
std::shared_ptr<openreg::sim::SimState> openreg::sim::AcquireSimState(
    const char* function) {
  return openreg::cpu_sim::AcquireState(function);
}
