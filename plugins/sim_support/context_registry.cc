#include "plugins/sim_support/context_registry.h"

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {
namespace {

// What a context handle points at (Note [Context handles are slot
// addresses]): the state while the context is live, else null.
struct Slot {
  std::atomic<SimState*> state{nullptr};
};

// Block b holds kFirstBlockSlots << b slots. Memory runs out long before the
// last block would be needed.
constexpr size_t kFirstBlockSlots = 64;
constexpr int kBlockCount = 48;

constexpr size_t BlockSlots(int block) { return kFirstBlockSlots << block; }

uintptr_t Address(const void* pointer) {
  return reinterpret_cast<uintptr_t>(pointer);
}

class Registry {
 public:
  // `parent` is the registry of the process this one was forked from, or
  // null (Note [Contexts and fork]).
  explicit Registry(const Registry* parent) : parent_(parent) {}

  // The slot `context` is the address of, or null when it is not one of this
  // registry's slots. Reads no slot and takes no lock.
  Slot* Locate(openreg_context context) const {
    const uintptr_t address = Address(context);
    for (int b = 0; b < kBlockCount; ++b) {
      Slot* block = blocks_[b].load(std::memory_order_acquire);
      if (block == nullptr) return nullptr;
      // Wraps to a huge value for an address below the block.
      const uintptr_t offset = address - Address(block);
      if (offset < BlockSlots(b) * sizeof(Slot)) {
        if (offset % sizeof(Slot) != 0) return nullptr;
        return block + offset / sizeof(Slot);
      }
    }
    return nullptr;
  }

  // Whether `context` names a slot of a registry this process was forked
  // from.
  bool FromBeforeFork(openreg_context context) const {
    for (const Registry* r = parent_; r != nullptr; r = r->parent_) {
      if (r->Locate(context) != nullptr) return true;
    }
    return false;
  }

  absl::Mutex mu;
  absl::flat_hash_map<Slot*, std::shared_ptr<SimState>> live
      ABSL_GUARDED_BY(mu);
  bool exiting ABSL_GUARDED_BY(mu) = false;
  std::vector<std::shared_ptr<SimState>> kept ABSL_GUARDED_BY(mu);

  // A slot never issued before.
  Slot* IssueSlot() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (last_block_ < 0 || used_in_last_block_ == BlockSlots(last_block_)) {
      ++last_block_;
      blocks_[last_block_].store(new Slot[BlockSlots(last_block_)],
                                 std::memory_order_release);
      used_in_last_block_ = 0;
    }
    return blocks_[last_block_].load(std::memory_order_relaxed) +
           used_in_last_block_++;
  }

 private:
  const Registry* const parent_;
  // Allocated in order by IssueSlot, never freed: the blocks after the first
  // null one are null too.
  std::atomic<Slot*> blocks_[kBlockCount] = {};
  int last_block_ ABSL_GUARDED_BY(mu) = -1;
  size_t used_in_last_block_ ABSL_GUARDED_BY(mu) = 0;
};

// Never destroyed (Note [Contexts at process exit]); replaced only in a
// forked child, which keeps the parent's registry allocated and untouched.
std::atomic<Registry*> g_registry{new Registry(nullptr)};

ABSL_CONST_INIT absl::once_flag g_fork_hook_once;

Registry& Current() { return *g_registry.load(std::memory_order_acquire); }

// Runs in the child only, which has a single thread: touches no mutex.
void ReplaceRegistryInForkedChild() {
  g_registry.store(new Registry(&Current()), std::memory_order_release);
}

openreg_status NotLive(const Registry& registry, openreg_context context,
                       const char* function) {
  if (context == nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: context is NULL; pass the context that "
                                "context_create returned",
                                function));
  }
  if (registry.FromBeforeFork(context)) {
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

// FindState's failure: off the fast path, so it may take the lock.
[[gnu::noinline]] openreg_status LookupFailed(Registry& registry,
                                              openreg_context context,
                                              const char* function) {
  absl::ReaderMutexLock lock(&registry.mu);
  if (registry.exiting) return Exiting(context, function);
  return NotLive(registry, context, function);
}

}  // namespace

openreg_context RegisterContext(std::shared_ptr<SimState> state) {
  // Process-wide, so a forked child (which inherits this flag) does not
  // install the hook twice.
  absl::call_once(g_fork_hook_once, [] {
    pthread_atfork(nullptr, nullptr, ReplaceRegistryInForkedChild);
  });
  Registry& registry = Current();
  absl::MutexLock lock(&registry.mu);
  Slot* slot = registry.IssueSlot();
  SimState* raw = state.get();
  registry.live.emplace(slot, std::move(state));
  // Created during exit: registered, so it stays allocated, but unusable.
  if (!registry.exiting) slot->state.store(raw, std::memory_order_release);
  return reinterpret_cast<openreg_context>(slot);
}

openreg_status UnregisterContext(openreg_context context, const char* function,
                                 std::shared_ptr<SimState>* state) {
  Registry& registry = Current();
  absl::MutexLock lock(&registry.mu);
  if (registry.exiting) return Exiting(context, function);
  Slot* slot = registry.Locate(context);
  auto it = slot == nullptr ? registry.live.end() : registry.live.find(slot);
  if (it == registry.live.end()) return NotLive(registry, context, function);
  slot->state.store(nullptr, std::memory_order_release);
  *state = std::move(it->second);
  registry.live.erase(it);
  return OPENREG_SUCCESS;
}

openreg_status FindState(openreg_context context, const char* function,
                         SimState** state) {
  Registry& registry = Current();
  if (const Slot* slot = registry.Locate(context); slot != nullptr) [[likely]] {
    if (SimState* found = slot->state.load(std::memory_order_acquire);
        found != nullptr) [[likely]] {
      *state = found;
      return OPENREG_SUCCESS;
    }
  }
  return LookupFailed(registry, context, function);
}

std::vector<std::shared_ptr<SimState>> CloseRegistryForExit() {
  Registry& registry = Current();
  absl::MutexLock lock(&registry.mu);
  registry.exiting = true;
  std::vector<std::shared_ptr<SimState>> states;
  states.reserve(registry.live.size());
  for (const auto& [slot, state] : registry.live) {
    slot->state.store(nullptr, std::memory_order_release);
    states.push_back(state);
  }
  return states;
}

void KeepUntilExit(std::shared_ptr<SimState> state) {
  Registry& registry = Current();
  absl::MutexLock lock(&registry.mu);
  registry.kept.push_back(std::move(state));
}

}  // namespace openreg::sim
