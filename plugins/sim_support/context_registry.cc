#include "plugins/sim_support/context_registry.h"

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/handle_registry.h"

namespace openreg::sim {
namespace {

struct Registry {
  // A forked child's registry: handles below `first_child_handle` were
  // issued in the parent (Note [Contexts and fork]).
  explicit Registry(uintptr_t first_child_handle)
      : first_child_handle(first_child_handle) {}

  const uintptr_t first_child_handle;
  absl::Mutex mu;
  absl::flat_hash_map<uintptr_t, std::shared_ptr<SimState>> live
      ABSL_GUARDED_BY(mu);
  bool exiting ABSL_GUARDED_BY(mu) = false;
  std::vector<std::shared_ptr<SimState>> kept ABSL_GUARDED_BY(mu);
};

// Never destroyed (Note [Contexts at process exit]); replaced only in a
// forked child, which keeps the parent's registry allocated and untouched.
std::atomic<Registry*> g_registry{new Registry(0)};

ABSL_CONST_INIT absl::once_flag g_fork_hook_once;

Registry& Current() { return *g_registry.load(std::memory_order_acquire); }

// Runs in the child only, which has a single thread: touches no mutex.
void ReplaceRegistryInForkedChild() {
  g_registry.store(new Registry(HandleIdsIssued()), std::memory_order_release);
}

uintptr_t Key(openreg_context context) {
  return reinterpret_cast<uintptr_t>(context);
}

openreg_status NotLive(const Registry& registry, openreg_context context,
                       const char* function) {
  if (context == nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: context is NULL; pass the context that "
                                "context_create returned",
                                function));
  }
  if (Key(context) < registry.first_child_handle) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: context %p is not a live context of this "
                                "process: it was destroyed, or created by the "
                                "parent before this process was forked; a "
                                "forked child cannot use its parent's "
                                "contexts (their threads do not survive "
                                "fork), create a new one with context_create",
                                function, context));
  }
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("%s: context %p is not a live context of this "
                              "driver; it was destroyed by context_destroy, "
                              "never returned by context_create, or belongs "
                              "to another driver library",
                              function, context));
}

openreg_status Exiting(openreg_context context, const char* function) {
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("%s: context %p is unusable because the process "
                              "is exiting: the driver stopped the worker "
                              "threads of every context and accepts no more "
                              "calls",
                              function, context));
}

}  // namespace

openreg_context RegisterContext(std::shared_ptr<SimState> state) {
  // Process-wide, so a forked child (which inherits this flag) does not
  // install the hook twice.
  absl::call_once(g_fork_hook_once, [] {
    pthread_atfork(nullptr, nullptr, ReplaceRegistryInForkedChild);
  });
  const uintptr_t key = NextHandleId();
  Registry& registry = Current();
  absl::MutexLock lock(&registry.mu);
  registry.live.emplace(key, std::move(state));
  return reinterpret_cast<openreg_context>(key);
}

openreg_status UnregisterContext(openreg_context context, const char* function,
                                 std::shared_ptr<SimState>* state) {
  Registry& registry = Current();
  absl::MutexLock lock(&registry.mu);
  if (registry.exiting) return Exiting(context, function);
  auto it = registry.live.find(Key(context));
  if (it == registry.live.end()) return NotLive(registry, context, function);
  *state = std::move(it->second);
  registry.live.erase(it);
  return OPENREG_SUCCESS;
}

openreg_status FindState(openreg_context context, const char* function,
                         std::shared_ptr<SimState>* state) {
  Registry& registry = Current();
  // Shared: lookups only copy a pointer, so they need not serialize.
  absl::ReaderMutexLock lock(&registry.mu);
  if (registry.exiting) return Exiting(context, function);
  auto it = registry.live.find(Key(context));
  if (it == registry.live.end()) return NotLive(registry, context, function);
  *state = it->second;
  return OPENREG_SUCCESS;
}

std::vector<std::shared_ptr<SimState>> CloseRegistryForExit() {
  Registry& registry = Current();
  absl::MutexLock lock(&registry.mu);
  registry.exiting = true;
  std::vector<std::shared_ptr<SimState>> states;
  states.reserve(registry.live.size());
  for (const auto& [key, state] : registry.live) states.push_back(state);
  return states;
}

void KeepUntilExit(std::shared_ptr<SimState> state) {
  Registry& registry = Current();
  absl::MutexLock lock(&registry.mu);
  registry.kept.push_back(std::move(state));
}

}  // namespace openreg::sim
