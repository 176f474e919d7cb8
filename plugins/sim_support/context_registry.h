// The live contexts of one simulated driver library, and the opaque
// openreg_context handles that name them.
//
// sim_support is linked statically into each driver .so with hidden
// visibility, so every driver library has its own registry: a registry of
// what exists, not a "current state". Each context_create registers a new
// state under a fresh handle (a number from NextHandleId, never reused and
// never a pointer), so a NULL, destroyed, made-up or foreign context is a
// failed lookup with a clear INVALID_ARGUMENT message, never a use-after-free.
// FindState is the one prologue of every ABI function that takes a context.
//
// Note [Contexts and fork]
// Threads do not survive fork(): a child has none of its parent's worker
// threads, and a mutex some parent thread held (this registry's included)
// stays locked in the child forever. The first RegisterContext therefore
// installs a pthread_atfork child handler that gives the child a fresh, empty
// registry without touching the parent's (which stays allocated, untouched,
// with every parent state in it). In the child the parent's contexts are
// unknown, and the message says they may come from before the fork; new
// contexts work.
//
// Note [Contexts at process exit]
// The core never destroys its context, so at exit a state may still have
// work running. The registry is a heap object that is never freed, so no
// state is destroyed by static destructors. A driver with threads
// (threaded_sim) closes the registry from an atexit handler: later lookups
// fail saying the process is exiting, and it stops the workers of every state
// it gets back, which stay allocated.
//
// Ownership: the registry holds a reference to every live state, and keeps
// states passed to KeepUntilExit for the rest of the process.
// Thread-safety: all functions may be called concurrently; the registry's
// mutex guards its maps and is never held while a state is used.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_CONTEXT_REGISTRY_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_CONTEXT_REGISTRY_H_

#include <memory>
#include <utility>
#include <vector>

#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/sim_state.h"

namespace openreg::sim {

// context_create: makes `state` live under a new handle.
openreg_context RegisterContext(std::shared_ptr<SimState> state);

// context_destroy: makes `context` dead and hands its state to the caller
// (to stop and release), else fails as FindState does.
openreg_status UnregisterContext(openreg_context context, const char* function,
                                 std::shared_ptr<SimState>* state);

// The state of a live `context` in *state, else INVALID_ARGUMENT naming
// `function` and why (NULL, not live, or the process is exiting).
openreg_status FindState(openreg_context context, const char* function,
                         std::shared_ptr<SimState>* state);

// FindState for a driver's own state type. Every state of a library is of
// that library's one DriverState type, so the downcast is exact.
template <typename State>
openreg_status FindState(openreg_context context, const char* function,
                         std::shared_ptr<State>* state) {
  std::shared_ptr<SimState> found;
  SIM_RETURN_IF_ERROR(FindState(context, function, &found));
  *state = std::static_pointer_cast<State>(std::move(found));
  return OPENREG_SUCCESS;
}

// Process exit (Note [Contexts at process exit]): every later lookup fails
// saying the process is exiting. Returns the live states, which stay
// registered and allocated.
std::vector<std::shared_ptr<SimState>> CloseRegistryForExit();

// Keeps `state` allocated until the process ends: for a state some thread
// may still use after its context was destroyed (a worker that could not be
// joined).
void KeepUntilExit(std::shared_ptr<SimState> state);

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_CONTEXT_REGISTRY_H_
