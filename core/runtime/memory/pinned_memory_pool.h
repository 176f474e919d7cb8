// The caching allocator of pinned host memory (docs/memory.md, "Pinned
// memory").
//
// Requests are rounded up to a power of two (at least kMinPinnedBlockSize)
// and served from a free list per size, so a steady loop of pinned staging
// buffers makes no driver calls. A block that asynchronous copies still use
// carries an event per stream (RecordEvent); when freed it returns to its
// free list only after all of them have fired. A stream use whose event could
// not be recorded (the driver failed event_record) is tracked again when the
// block is freed, and then at every sweep, with an event recorded on that
// stream later, which fires after the use: streams run in order. Until then
// the block is not reused. EmptyCache() returns every cached block to the
// driver.
//
// Thread-safety: all methods may be called from any thread; one mutex guards
// all state, and no callback into the core happens under it.
#ifndef OPENREG_CORE_RUNTIME_MEMORY_PINNED_MEMORY_POOL_H_
#define OPENREG_CORE_RUNTIME_MEMORY_PINNED_MEMORY_POOL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/driver/driver.h"
#include "core/runtime/memory/memory_stats.h"
#include "core/runtime/memory/pending_events.h"

namespace openreg {

inline constexpr size_t kMinPinnedBlockSize = 512;

class PinnedMemoryPool {
 public:
  // `driver` must outlive the pool.
  explicit PinnedMemoryPool(const Driver& driver);
  // Returns cached blocks to the driver; blocks in use are leaked.
  ~PinnedMemoryPool();

  PinnedMemoryPool(const PinnedMemoryPool&) = delete;
  PinnedMemoryPool& operator=(const PinnedMemoryPool&) = delete;

  // Pinned memory of at least `size` bytes.
  absl::StatusOr<void*> Allocate(size_t size);

  // Frees memory from Allocate; false for a pointer not allocated here.
  bool Free(void* ptr);

  // Work just enqueued on `stream` (of `device`) uses the block `ptr`
  // starts: it is not reused before that work has run. False for a pointer
  // not allocated here.
  bool RecordEvent(void* ptr, int32_t device, openreg_stream stream);

  // Waits for pending events and returns every cached block to the driver.
  absl::Status EmptyCache();

  HostMemoryStats stats() const;
  void ResetPeakStats();
  void ResetAccumulatedStats();

 private:
  // Bucket b holds blocks of kMinPinnedBlockSize << b bytes.
  static constexpr int kBucketCount = 48;

  struct PinnedBlock {
    size_t size = 0;
    bool allocated = false;
    // Events recorded on the block while allocated, fired or not.
    absl::InlinedVector<DriverEvent, 1> events;
    // Events of the block, once freed, that have not fired yet.
    int32_t pending = 0;
    // Streams (with their device) whose use of the block has no event yet:
    // the record failed. Not reused while any is left.
    absl::InlinedVector<std::pair<int32_t, openreg_stream>, 1> untracked;
  };

  static int BucketOf(size_t size);
  // Returns blocks whose events have fired to their free lists; with `wait`,
  // waits for all of them.
  void ProcessEvents(bool wait) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void MakeAvailable(void* ptr, PinnedBlock& block)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Records an event for each untracked stream of the freed block `ptr` and
  // makes it pending; returns whether none is left untracked.
  bool TrackUntracked(void* ptr, PinnedBlock& block)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const Driver& driver_;
  mutable absl::Mutex mutex_;
  absl::flat_hash_map<void*, PinnedBlock> blocks_ ABSL_GUARDED_BY(mutex_);
  std::array<std::vector<void*>, kBucketCount> free_lists_
      ABSL_GUARDED_BY(mutex_);
  PendingEvents<void*> pending_events_ ABSL_GUARDED_BY(mutex_);
  // Freed blocks with untracked streams, retried at every sweep.
  std::vector<void*> untracked_blocks_ ABSL_GUARDED_BY(mutex_);
  HostMemoryStats stats_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_PINNED_MEMORY_POOL_H_
