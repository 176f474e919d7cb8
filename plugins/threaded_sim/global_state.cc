#include "plugins/threaded_sim/global_state.h"

#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/base/thread_annotations.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "plugins/sim_support/error.h"

namespace openreg::threaded_sim {

using sim::Fail;

namespace {

// Why the slot holds no state, for NOT_INITIALIZED messages.
enum class EmptyReason { kNotInitialized, kProcessExiting, kForkedChild };

struct GlobalSlot {
  explicit GlobalSlot(EmptyReason reason, GlobalSlot* previous)
      : empty_reason(reason), previous(previous) {}

  absl::Mutex mu;
  std::shared_ptr<DriverState> state ABSL_GUARDED_BY(mu);
  EmptyReason empty_reason ABSL_GUARDED_BY(mu);
  // States that must outlive their use (see AbandonState); held here so they
  // stay reachable, which also keeps leak checkers quiet about them.
  std::vector<std::shared_ptr<DriverState>> abandoned ABSL_GUARDED_BY(mu);
  // A forked child's slot keeps the parent's slot (see Note [fork]).
  GlobalSlot* const previous;
};

// Never destroyed (Note [Process exit with work still queued]); replaced only
// in a forked child.
std::atomic<GlobalSlot*> g_slot{
    new GlobalSlot(EmptyReason::kNotInitialized, nullptr)};

ABSL_CONST_INIT absl::once_flag g_hooks_once;

GlobalSlot& Slot() { return *g_slot.load(std::memory_order_acquire); }

void StopWorkersAtExit() {
  GlobalSlot& slot = Slot();
  std::shared_ptr<DriverState> state;
  {
    absl::MutexLock lock(&slot.mu);
    state = std::move(slot.state);
    slot.empty_reason = EmptyReason::kProcessExiting;
  }
  if (state == nullptr) return;
  state->Stop(kWorkerJoinTimeout);
  // Kept even when every worker was joined: threads that are not ours may
  // still be inside a driver call, using device memory, while the process
  // exits.
  AbandonState(std::move(state));
}

// Runs in the child only, which has a single thread: touches no mutex.
void ReplaceSlotInForkedChild() {
  g_slot.store(new GlobalSlot(EmptyReason::kForkedChild,
                              g_slot.load(std::memory_order_relaxed)),
               std::memory_order_release);
}

const char* EmptyExplanation(EmptyReason reason) {
  switch (reason) {
    case EmptyReason::kNotInitialized:
      return "the driver is not initialized; call init first (or again after "
             "shutdown)";
    case EmptyReason::kProcessExiting:
      return "the process is exiting: the driver stopped its worker threads "
             "and accepts no more calls";
    case EmptyReason::kForkedChild:
      return "this process was forked from one that used the driver; worker "
             "threads do not survive fork, so the parent's driver state is "
             "unusable here; call init in the child";
  }
  return "the driver is not initialized";
}

}  // namespace

openreg_status InstallState(std::shared_ptr<DriverState> state) {
  GlobalSlot& slot = Slot();
  absl::MutexLock lock(&slot.mu);
  if (slot.state != nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "init: the driver is already initialized; call shutdown "
                "before initializing it again");
  }
  // Process-wide, so a forked child (which inherits the parent's memory,
  // this flag included) does not install them twice.
  absl::call_once(g_hooks_once, [] {
    std::atexit(StopWorkersAtExit);
    pthread_atfork(nullptr, nullptr, ReplaceSlotInForkedChild);
  });
  slot.state = std::move(state);
  return OPENREG_SUCCESS;
}

std::shared_ptr<DriverState> ReleaseState() {
  GlobalSlot& slot = Slot();
  absl::MutexLock lock(&slot.mu);
  slot.empty_reason = EmptyReason::kNotInitialized;
  return std::exchange(slot.state, nullptr);
}

std::shared_ptr<DriverState> AcquireState(const char* function) {
  GlobalSlot& slot = Slot();
  std::shared_ptr<DriverState> state;
  EmptyReason reason;
  {
    // Shared: calls only copy the pointer, so they need not serialize.
    absl::ReaderMutexLock lock(&slot.mu);
    state = slot.state;
    reason = slot.empty_reason;
  }
  if (state == nullptr) {
    Fail(OPENREG_ERROR_NOT_INITIALIZED,
         absl::StrFormat("%s: %s", function, EmptyExplanation(reason)));
  }
  return state;
}

void AbandonState(std::shared_ptr<DriverState> state) {
  GlobalSlot& slot = Slot();
  absl::MutexLock lock(&slot.mu);
  slot.abandoned.push_back(std::move(state));
}

}  // namespace openreg::threaded_sim

// Declared by plugins/sim_support/sim_state.h; each driver defines it once.
std::shared_ptr<openreg::sim::SimState> openreg::sim::AcquireSimState(
    const char* function) {
  return openreg::threaded_sim::AcquireState(function);
}
