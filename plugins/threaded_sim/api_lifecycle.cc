#include <memory>

#include "plugins/sim_support/context_registry.h"
#include "plugins/sim_support/error.h"
#include "plugins/threaded_sim/api.h"
#include "plugins/threaded_sim/config.h"
#include "plugins/threaded_sim/driver_state.h"
#include "plugins/threaded_sim/process_exit.h"

namespace openreg::threaded_sim {

openreg_status context_create(const openreg_driver_config* config,
                              openreg_context* context) {
  SIM_RETURN_IF_ERROR(
      sim::RequireNonNull(context, "context_create", "context"));
  ThreadedSimConfig parsed;
  SIM_RETURN_IF_ERROR(ParseConfig(config, &parsed));
  // Before the context exists, so its workers are always stopped at exit.
  StopWorkersAtProcessExit();
  *context = sim::RegisterContext(std::make_shared<DriverState>(parsed));
  return OPENREG_SUCCESS;
}

openreg_status context_destroy(openreg_context context) {
  std::shared_ptr<sim::SimState> removed;
  SIM_RETURN_IF_ERROR(
      sim::UnregisterContext(context, "context_destroy", &removed));
  auto& state = static_cast<DriverState&>(*removed);
  // Queued work is dropped and workers joined. A worker still inside a host
  // function after kWorkerJoinTimeout is left running, with the memory it
  // may use; otherwise dropping the last reference frees everything.
  state.Stop();
  if (!state.Join(absl::Now() + kWorkerJoinTimeout)) {
    sim::KeepUntilExit(std::move(removed));
  }
  return OPENREG_SUCCESS;
}

}  // namespace openreg::threaded_sim
