// Note [Process exit with work still queued]
// The core never destroys its context: it keeps it for the life of the
// process, so at exit workers may still be running or waiting, and static
// destructors must not run under them. Two measures keep exit from hanging or
// crashing:
//   1. Nothing of the driver is destroyed at exit: the context registry is a
//      heap object that is never freed (Note [Contexts at process exit] in
//      plugins/sim_support/context_registry.h), so every state stays
//      allocated.
//   2. The first context_create registers an atexit handler. Handlers and
//      static destructors run in reverse order of registration, so it runs
//      before the destructors of every library loaded before that call
//      (libstdc++, abseil, torch). It closes the registry (later calls fail
//      saying the process is exiting), drops the queued work of every live
//      context, and then joins all their workers against one deadline,
//      kWorkerJoinTimeout away, so exit waits that long at most whatever the
//      number of contexts. A worker stuck in a host function past that is
//      left running; the process exits around it.
// A forked child inherits the handler; it stops the child's own contexts, as
// the child's registry holds only those (Note [Contexts and fork]).
//
// Thread-safety: may be called concurrently; installs the handler once per
// process.
#ifndef OPENREG_PLUGINS_THREADED_SIM_PROCESS_EXIT_H_
#define OPENREG_PLUGINS_THREADED_SIM_PROCESS_EXIT_H_

namespace openreg::threaded_sim {

// Called by context_create: registers the exit handler the first time.
void StopWorkersAtProcessExit();

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_PROCESS_EXIT_H_
