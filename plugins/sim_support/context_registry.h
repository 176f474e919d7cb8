// The live contexts of one simulated driver library, and the opaque
// openreg_context handles that name them.
//
// sim_support is linked statically into each driver .so with hidden
// visibility, so every driver library has its own registry: a registry of
// what exists, not a "current state". FindState is the one prologue of every
// ABI function that takes a context, so it must cost next to nothing; it takes
// no lock and touches no reference count.
//
// Note [Context handles are slot addresses]
// Each context_create takes the next unused slot of the registry, and the
// handle is that slot's address. Slots live in blocks that are allocated
// in order (each twice the size of the last, so there are few of them),
// published with a release store and never freed, and a slot is issued once:
//   - FindState first checks, without dereferencing anything, that the handle
//     is the address of an issued slot of one of this registry's blocks. A
//     NULL or made-up handle fails here, and so does another driver library's
//     context: its slots are in that library's blocks, which are other
//     memory. (A number from a per-library counter could not tell: two
//     libraries' counters give the same numbers.)
//   - Only then does it read the slot: one acquire load of an atomic
//     SimState*, set (release) by RegisterContext after the state is built
//     and cleared by UnregisterContext. A destroyed context's slot stays
//     cleared forever, because no slot is handed out twice; so no generation
//     count is needed, and a stale handle can never name a newer context.
// The cost is one pointer-sized slot per context ever created, which is
// nothing next to a context. The alternative, a per-thread one-entry cache
// validated by a registry epoch, still needs a thread_local access (a
// __tls_get_addr call in a dlopen'ed library) on every call and cannot tell
// another library's context apart either.
//
// The pointer FindState returns is raw: the ABI lets no call on a context run
// concurrently with its context_destroy (driver_abi/openreg_driver.h,
// "Threading"), so the state outlives every call that found it. The states
// that may outlive that rule's reach are kept explicitly: at exit none is
// freed, and KeepUntilExit keeps a state whose workers could not be joined.
//
// Note [Contexts and fork]
// Threads do not survive fork(): a child has none of its parent's worker
// threads, and a mutex some parent thread held (this registry's included)
// stays locked in the child forever. The first RegisterContext therefore
// installs a pthread_atfork child handler that gives the child a fresh, empty
// registry without touching the parent's (which stays allocated, untouched,
// with every parent state in it). In the child the parent's contexts are
// unknown, and the message says they come from before the fork; new contexts
// work.
//
// Note [Contexts at process exit]
// The core never destroys its context, so at exit a state may still have
// work running. The registry is a heap object that is never freed, so no
// state is destroyed by static destructors. A driver with threads
// (threaded_sim) closes the registry from an atexit handler: every slot is
// cleared, so later lookups fail saying the process is exiting, and it stops
// the workers of every state it gets back, which stay allocated.
//
// Ownership: the registry holds a reference to every live state, and keeps
// states passed to KeepUntilExit for the rest of the process. Slots only
// point at states the registry holds.
// Thread-safety: all functions may be called concurrently. The registry's
// mutex guards which slots are issued and the references; FindState reads
// only atomics and never waits for it.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_CONTEXT_REGISTRY_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_CONTEXT_REGISTRY_H_

#include <memory>
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
// `function` and why (NULL, not live, from before a fork, or the process is
// exiting). *state stays valid until the context is destroyed (see above).
openreg_status FindState(openreg_context context, const char* function,
                         SimState** state);

// FindState for a driver's own state type. Every state of a library is of
// that library's one DriverState type, so the downcast is exact.
template <typename State>
openreg_status FindState(openreg_context context, const char* function,
                         State** state) {
  SimState* found = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, function, &found));
  *state = static_cast<State*>(found);
  return OPENREG_SUCCESS;
}

// Process exit (Note [Contexts at process exit]): every later lookup fails
// saying the process is exiting. Returns the live states, which stay
// allocated.
std::vector<std::shared_ptr<SimState>> CloseRegistryForExit();

// Keeps `state` allocated until the process ends: for a state some thread
// may still use after its context was destroyed (a worker that could not be
// joined).
void KeepUntilExit(std::shared_ptr<SimState> state);

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_CONTEXT_REGISTRY_H_
