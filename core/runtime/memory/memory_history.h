// Note [Memory history]
//
// What torch.openreg.memory._record_memory_history records: every action of
// one device's caching allocator (allocations, frees, driver segments, out of
// memory), with the stream, the address, the size, the time and an opaque
// context (the stack), in a ring buffer of at most `max_entries` entries;
// and, for the snapshot, the context of each live allocation and segment.
// The format is CUDA's (docs/memory_snapshots.md).
//
// This layer has no torch: a context is a shared_ptr<void> that it only
// stores. The torch runtime installs the Gatherer, which captures a
// torch::CapturedTraceback and the current stream, and the bindings
// symbolize them.
//
// Cost when off: the pool asks enabled(), one relaxed atomic load, per
// allocation and per free; nothing else runs.
//
// Thread-safety: all methods may be called from any thread. mutex_ guards
// the settings and the ring buffer. The pool calls Record while holding its
// own mutex (pool mutex before history mutex, never the reverse). Gather
// calls the gatherer with no lock of ours held, because capturing Python
// frames takes the GIL, which a thread waiting for a pool may hold.
#ifndef OPENREG_CORE_RUNTIME_MEMORY_MEMORY_HISTORY_H_
#define OPENREG_CORE_RUNTIME_MEMORY_MEMORY_HISTORY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace openreg {

// Names a private pool (c10's MempoolId_t): graphs capture into one, and
// graphs given the same id share it. {0, 0} is the device's own pool.
using PrivatePoolId = std::pair<uint64_t, uint64_t>;

// CUDA's trace actions, under their names in the snapshot.
enum class TraceAction {
  kAlloc,          // a block handed out
  kFreeRequested,  // a block freed by its user
  kFreeCompleted,  // a freed block reusable (its record_stream events fired)
  kSegmentAlloc,   // a driver allocation
  kSegmentFree,    // a driver allocation returned
  kOom,            // an allocation failed; `size` was asked for
  kSnapshot,       // a snapshot was taken (to place it in the trace)
};
constexpr int kTraceActionCount = 7;
const char* TraceActionName(TraceAction action);

// Which actions carry a stack (CUDA's `context` argument).
enum class ContextWhen {
  kNever,  // none
  kState,  // live allocations and segments only (for the snapshot)
  kAlloc,  // those and alloc/segment_alloc trace entries
  kAll,    // every entry, frees too
};

// What the gatherer captures where an action happens.
struct HistoryContext {
  std::shared_ptr<void> frames;  // null when no stack was asked for
  uint64_t stream = 0;           // the caller's current driver stream
};

struct TraceEntry {
  TraceAction action = TraceAction::kAlloc;
  uintptr_t address = 0;
  size_t size = 0;
  uint64_t stream = 0;
  int64_t time_us = 0;  // Unix time in microseconds
  std::shared_ptr<void> frames;
  PrivatePoolId pool;
  uint64_t device_free = 0;  // kOom only: the driver's free bytes
};

struct HistorySettings {
  bool record_trace = false;  // false: live contexts only (enabled="state")
  ContextWhen context = ContextWhen::kNever;
  size_t max_entries = 0;  // ring buffer bound, at least 1 when tracing
  // Bit (1 << action) set: that action is not recorded (skip_actions).
  uint32_t skipped_actions = 0;
};

class MemoryHistory {
 public:
  // Gathers a context on `device`; `with_frames` says whether a stack is
  // wanted. Installed by the torch runtime.
  using Gatherer =
      std::function<HistoryContext(int32_t device, bool with_frames)>;

  // Starts recording (or changes the settings), keeping entries already
  // recorded up to the new bound.
  void Enable(const HistorySettings& settings, Gatherer gatherer);
  // Stops recording and drops the trace.
  void Disable();
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  // The context of an allocation (`for_free` false) or a free on `device`;
  // empty when recording is off. Call with no lock held.
  HistoryContext Gather(int32_t device, bool for_free) const;
  // Whether a live block or segment keeps its allocation's stack.
  bool keeps_state_frames() const;

  // Appends to the ring buffer when tracing; drops `entry.frames` from the
  // entry when the settings ask for no stack for its action.
  void Record(TraceEntry entry);
  // The trace, oldest first.
  std::vector<TraceEntry> Trace() const;

 private:
  std::atomic<bool> enabled_{false};
  mutable absl::Mutex mutex_;
  HistorySettings settings_ ABSL_GUARDED_BY(mutex_);
  // Shared so that Gather can call it after releasing mutex_.
  std::shared_ptr<const Gatherer> gatherer_ ABSL_GUARDED_BY(mutex_);
  std::vector<TraceEntry> ring_ ABSL_GUARDED_BY(mutex_);
  size_t next_ ABSL_GUARDED_BY(mutex_) = 0;  // oldest entry once full
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_MEMORY_HISTORY_H_
