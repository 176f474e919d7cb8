// The process-wide slot that holds the initialized DriverState, and the
// process hooks that keep worker threads from outliving what they use.
//
// Note [Process exit with work still queued]
// The core never calls shutdown: it keeps the driver for the life of the
// process, so at exit workers may still be running or waiting, and static
// destructors must not run under them. Two measures keep exit from hanging or
// crashing:
//   1. Nothing of the driver is destroyed at exit: the slot is a heap object
//      that is never freed, and a state taken out of it at exit is kept
//      alive for the rest of the process.
//   2. The first init registers an atexit handler. Handlers and static
//      destructors run in reverse order of registration, so it runs before
//      the destructors of every library loaded before init (libstdc++,
//      abseil, torch). It empties the slot (later calls fail with
//      NOT_INITIALIZED), drops all queued work, and joins the workers,
//      waiting at most kWorkerJoinTimeout for items that are running. A
//      worker stuck in a host function past that is left running; the
//      process exits around it.
//
// Note [fork]
// Threads do not survive fork(): a child has none of the parent's workers,
// and mutexes that a parent thread held stay locked. A pthread_atfork child
// handler therefore gives the child a fresh, empty slot and keeps the
// parent's state (and the old slot) alive untouched. In the child, calls fail
// with NOT_INITIALIZED until init is called there, and exit has no workers
// to wait for.
//
// Thread-safety: all functions may be called concurrently; the slot's mutex
// guards the state pointer.
#ifndef OPENREG_PLUGINS_THREADED_SIM_GLOBAL_STATE_H_
#define OPENREG_PLUGINS_THREADED_SIM_GLOBAL_STATE_H_

#include <memory>

#include "driver_abi/openreg_driver.h"
#include "plugins/threaded_sim/driver_state.h"

namespace openreg::threaded_sim {

// init: makes `state` current and, the first time, installs the process
// hooks. INVALID_ARGUMENT if the driver is already initialized.
openreg_status InstallState(std::shared_ptr<DriverState> state);

// shutdown: empties the slot and returns what it held (null when the driver
// was not initialized).
std::shared_ptr<DriverState> ReleaseState();

// The current state, or null after failing with NOT_INITIALIZED with a
// message naming `function` and why there is no state.
std::shared_ptr<DriverState> AcquireState(const char* function);

// Keeps `state` alive until the process ends: for a state whose workers
// could not all be joined (see DriverState::Stop).
void AbandonState(std::shared_ptr<DriverState> state);

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_GLOBAL_STATE_H_
