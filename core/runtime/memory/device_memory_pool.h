// The caching allocator of one device (Note [Device caching allocator]).
//
// Memory comes from the driver in segments and is handed out in blocks:
// requests are rounded (size_classes.h), served best-fit from the small or
// large pool, and a block bigger than needed is split; a freed block merges
// with free neighbours and stays cached for the next request. Only
// EmptyCache() and the out-of-memory path return whole free segments to the
// driver, so a steady training loop makes no driver calls at all.
//
// Note [Reuse before merge]: tiny ops allocate their output and free it a
// moment later, and a training step frees and allocates the same large
// sizes every step. Merging a freed block with its free neighbours at once,
// and splitting it off again at the next request, costs two B-tree erasures
// and two insertions per pair, and for large blocks, often the only free
// block of their pool, a B-tree node freed and allocated again each time.
// So a freed block is instead kept whole on a list of free blocks of its
// exact size (the idea of glibc's per-size caches), and a request of that
// size pops it: no search, no split, no merge. Those blocks are merged into
// the free sets when a request finds neither its size's list nor a cached
// block that fits, before the pool asks the driver for a new segment, and by
// EmptyCache: unmerged blocks never make the pool take more memory from the
// driver or keep it from returning a segment. Merging and settling walk the
// lists that hold blocks only, not all 2,048 small sizes: a walk of every
// list cost EmptyCache ~2 µs whenever a large block was unmerged.
//
// Note [Free memory counted as merged]: statistics and snapshots must not
// depend on when the pool merges: users read inactive_split as the
// fragmentation CUDA's allocator would report, which merges at every free.
// So they count free memory as if it were merged: inactive_split is the
// number of runs of adjacent free blocks in segments partly in use, and
// inactive_split_bytes their bytes; a wholly free segment counts as one
// unsplit block, and a snapshot shows each run as one inactive block. Each
// segment's SegmentUse keeps its free bytes and runs as blocks are handed
// out and freed, which looks at the block's two neighbours only.
//
// Note [Stream-ordered reuse]: work on one stream runs in the order it was
// enqueued, so a block the host frees may be handed out again at once to the
// next allocation the host makes for that same stream, even while work
// enqueued before the free still reads it: whatever the new owner enqueues
// on that stream runs after that work. This is how CUDA's allocator keeps a
// loop of small ops in the same few, cache-warm blocks. So a block allocated
// from the host remembers its stream (Block::stream), and once freed it
// serves only that stream's host allocations until the stream is known to
// have caught up with the free: the core says so after every synchronization
// (Settle), and EmptyCache and the out-of-memory path synchronize the device
// themselves. Then it is "settled" (stream null) and serves anyone.
// Allocations made inside running work (Allocate without a stream: a kernel's
// scratch and results) sit at the stream's execution point, behind the
// host's, so they take settled blocks only; the core's work owns such blocks
// while it uses them, so they come back settled.
// A program that never synchronizes must not lose its memory to that rule
// (Note [Settling without a synchronization], Note [Reuse inside work]).
// Uses on other streams are the caller's to order: the core's work owns the
// storages it uses on a stream other than their own (Note [Asynchronous
// execution]), so a block is freed only after that work has run; uses the
// core cannot see are declared with RecordStream(): on free, an event is
// recorded on each such stream and the block waits, counted as active, until
// every event has fired.
//
// Note [Settling without a synchronization]: allocations inside work take
// settled blocks only, and host allocations turn the settled blocks they
// take into their stream's once freed. So in a training loop that never
// synchronizes (no loss.item(), no print), settled memory only ever shrank
// and every step's allocations inside work took new segments: the bench's
// small ResNet reserved 13 MiB more per step on cpu_sim, 580 MiB after 40
// steps for 2 MiB allocated, bounded only by the device's capacity, when the
// out-of-memory path synchronizes. So before the pool asks the driver for a
// segment, it settles what the streams have caught up with, without waiting:
// it records an event, a settle marker, on each stream that has free blocks
// waiting and no marker pending, standing for every free made before it; a
// marker that has fired settles its stream's blocks freed before it, the
// way a synchronization does. A driver that runs work as it is enqueued has
// passed the marker at once, so the request is served from the settled
// blocks; an asynchronous one settles them at a later request, once its
// stream has run that far. Markers are recorded without the pool's lock: a
// record onto a full stream waits for the stream's work, which may
// allocate. Markers cost nothing while cached blocks serve requests.
//
// Note [Reuse inside work]: settle markers settle a stream's blocks only once
// the stream has run past the marker, so on an asynchronous driver
// allocations inside work still took new segments for dozens of steps of
// such a loop (the small ResNet on threaded_sim: 124 MiB reserved where
// cpu_sim keeps 60). Yet work knows where it stands: it runs after everything
// enqueued on its stream before it. A block freed on that stream before the
// work was enqueued was last used by work enqueued before the free, which
// has run. So the core passes, with an allocation inside work, the work's
// stream and the pool's SettleToken() read before the work was launched
// (StreamPoint), and the allocation may also take that stream's blocks
// stamped up to that token. The free's stamp is stored with release and the
// token loaded with acquire, so a token that covers a stamp was read after
// that free, and after every launch made before it. Work that owns the block
// frees it once it has run, settled, as before.
//
// Thread-safety: every public method may be called from any thread,
// including a driver's execution threads (kernels allocate scratch memory);
// one mutex guards all state. No method calls back into the core while
// holding it.
#ifndef OPENREG_CORE_RUNTIME_MEMORY_DEVICE_MEMORY_POOL_H_
#define OPENREG_CORE_RUNTIME_MEMORY_DEVICE_MEMORY_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/driver/driver.h"
#include "core/runtime/memory/allocator_config.h"
#include "core/runtime/memory/block.h"
#include "core/runtime/memory/index_set.h"
#include "core/runtime/memory/memory_history.h"
#include "core/runtime/memory/memory_snapshot.h"
#include "core/runtime/memory/memory_stats.h"
#include "core/runtime/memory/pending_events.h"
#include "core/runtime/memory/size_classes.h"
#include "core/runtime/memory/stream_point.h"

namespace openreg {

class DeviceMemoryPool {
 public:
  // `driver` and `history` (the device's, shared by its private pools) must
  // outlive the pool; `id` names the pool in snapshots.
  DeviceMemoryPool(const Driver& driver, int32_t device,
                   const AllocatorConfig& config, MemoryHistory& history,
                   const PrivatePoolId& id = {0, 0});
  // Returns every cached segment to the driver. Blocks still allocated are
  // the caller's bug and are leaked, not freed under a user.
  ~DeviceMemoryPool();

  DeviceMemoryPool(const DeviceMemoryPool&) = delete;
  DeviceMemoryPool& operator=(const DeviceMemoryPool&) = delete;

  // A block of at least `size` bytes. When nothing fits even after releasing
  // the cache, calls `reclaim` (without the lock held) so that its owner can
  // finish queued work that still holds memory, and tries once more; then
  // fails with kResourceExhausted and a message naming the device, the size,
  // what is allocated and reserved, and the capacity.
  // `stream` is the stream whose order the caller's use of the block follows
  // (Note [Stream-ordered reuse]): the host's current stream, whose blocks it
  // may then reuse, in which case `reclaim` must wait for all work enqueued
  // on the device before it returns and the pool then synchronizes the
  // device; or null, for callers inside running work and for memory that
  // work owns, which get settled blocks, and, given `inside_work`, where the
  // running work sits in its stream's order (Note [Reuse inside work]).
  absl::StatusOr<Block*> Allocate(size_t size,
                                  absl::FunctionRef<void()> reclaim,
                                  openreg_stream stream = nullptr,
                                  const StreamPoint& inside_work = {});

  // Returns `block` to the pool, at once or when the streams recorded on it
  // have caught up. Never fails: when an event cannot be recorded, the block
  // stays out of circulation until a later record on that stream has fired
  // (RetrackUntracked).
  void Free(Block* block);
  // The same for the block allocated at `ptr`, looked up and freed under one
  // lock; false when no block of this pool is allocated there.
  bool FreeAt(void* ptr);
  // The block allocated at `ptr`, or null.
  Block* FindAllocated(void* ptr) const;

  // Declares that `stream` uses `block` (Tensor.record_stream).
  void RecordStream(Block* block, openreg_stream stream);

  // Synchronizes the device if blocks freed on a stream wait for it or
  // blocks await events (waiting for an event under the lock would wait for
  // its stream's work, which may allocate), then returns every free segment
  // to the driver.
  absl::Status EmptyCache();

  // Settling blocks (Note [Stream-ordered reuse]): take a token before
  // waiting for `stream` (null: every stream of the device), and once the
  // wait has returned, Settle with it makes the blocks freed on that stream
  // before the token reusable by anyone. Also the token of a StreamPoint,
  // taken before the work is enqueued. Lock-free: read at every launch.
  uint64_t SettleToken() const;
  void Settle(openreg_stream stream, uint64_t token);

  DeviceMemoryStats stats() const;
  // Appends every segment with its blocks, in address order.
  void Snapshot(std::vector<SegmentSnapshot>& segments) const;
  void ResetPeakStats();
  void ResetAccumulatedStats();

  int32_t device() const { return device_; }

 private:
  using FreeSet = absl::btree_set<Block*, BlockByStreamSizeAddress>;

  FreeSet& FreeSetFor(bool small) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    return small ? small_free_ : large_free_;
  }
  // A free block for `size`, in TakeCachedBlock's order, each kind taken
  // off its size's list before the free sets: for the host, its stream's
  // blocks (merging the lists when they may hide some) before settled ones;
  // for work, settled ones before those its stream freed before it. Merges
  // the lists before it gives up: null means every free block is in a free
  // set.
  Block* TakeCached(size_t size, openreg_stream stream,
                    const StreamPoint& inside_work)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Settles the blocks of every fired marker; returns whether one fired.
  bool SweepSettleMarkers() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  struct NewSettleMarker {
    DriverEvent event;
    StreamPoint point;
  };
  // A marker, with its event, for each stream that has free blocks waiting
  // to settle and no marker pending; called after TakeCached found nothing
  // (Note [Settling without a synchronization]).
  std::vector<NewSettleMarker> NewSettleMarkers()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Records `markers` on their streams; settles at once those already passed.
  void RecordSettleMarkers(std::vector<NewSettleMarker> markers)
      ABSL_LOCKS_EXCLUDED(mutex_);
  // A cached block that may serve `size` for `stream` (its own, else a
  // settled one) or for work at `inside_work` (one its stream freed before
  // that point, else a settled one), removed from its free set.
  Block* TakeCachedBlock(size_t size, openreg_stream stream,
                         const StreamPoint& inside_work)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The best fit for `size` among the free blocks of `stream` exactly that
  // were freed up to `token`.
  Block* TakeCachedBlockOf(size_t size, openreg_stream stream,
                           uint64_t token = kAnyFree)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  static constexpr uint64_t kAnyFree = ~uint64_t{0};
  // Before the host's stream takes a new segment: merges the settled free
  // blocks next to its free blocks into them, for that stream, so that
  // memory freed since its last synchronization and memory settled at it
  // serve it together (they would otherwise stay in pieces side by side).
  // Returns whether there were any; every free block must be in a free set.
  bool AdoptSettledNeighbours(openreg_stream stream, bool small)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // A new segment from the driver holding one block of `segment_size`.
  // `context` is the allocation's while recording history, else null (so in
  // all the methods below).
  absl::StatusOr<Block*> AllocateSegment(size_t segment_size, bool small,
                                         const HistoryContext* context)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // TakeCached, or a new segment, for `size`; kResourceExhausted when
  // the driver has no room even after releasing the cache. Sets
  // `released_cache` when it released the cache, and counts the first time
  // in num_alloc_retries.
  absl::StatusOr<Block*> FindOrAllocate(size_t size, openreg_stream stream,
                                        const StreamPoint& inside_work,
                                        const HistoryContext* context,
                                        bool& released_cache)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Marks a block taken from the cache or the driver as allocated.
  Block* HandOut(Block* block, size_t size, size_t requested,
                 openreg_stream stream, const HistoryContext* context)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void RecordHistory(TraceAction action, const void* address, size_t size,
                     const HistoryContext& context)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Cuts `block` down to `size`, returning the rest to the free set, when
  // the rest is worth keeping apart.
  void MaybeSplit(Block* block, size_t size)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Counts `block` freed and returns it to the free set, or, when streams
  // were recorded on it, returns true: the caller then calls TrackStreamUses.
  bool FreeLocked(Block* block, const HistoryContext* context)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void InsertFree(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Note [Reuse before merge]: keeps a freed block whole on its size's
  // list; takes one of `stream` exactly (null: settled) freed up to `token`
  // off the list for `size`, among its first few, if any.
  void KeepUnmerged(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  Block* TakeUnmergedOf(size_t size, openreg_stream stream,
                        uint64_t token = kAnyFree)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Unlinks the block `link` points at from its list.
  Block* UnlinkUnmerged(Block*& link) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Merges every block on those lists into the free sets.
  void MergeUnmerged() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Calls `visit` with the head of each list that may hold unmerged blocks.
  void ForEachUnmergedList(absl::FunctionRef<void(Block*& head)> visit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Note [Free memory counted as merged]: counts `block` into the free
  // memory of its segment once `freed` (it was not free), or out of it when
  // handed out (it was free), with its neighbours as they are.
  void CountFree(const Block& block, bool freed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void EraseFree(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void EraseFree(Block* block, FreeSet::iterator position)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Block objects are recycled: splitting and merging on every
  // allocation would otherwise call new and delete each time.
  Block* NewBlock() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void RecycleBlock(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Takes a block its user and streams are done with out of the active
  // ones, onto its size's list (Note [Reuse before merge]).
  void ReturnToFreeSet(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Merges a free `block` with neighbours in the free sets and puts it in
  // its own. The lower block absorbs the higher, so a segment's first block
  // stays the same object for the segment's life (segments_ holds it).
  void MergeIntoFreeSet(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Records an event for each stream in the freed `block`'s stream_uses,
  // without the lock (a record onto a full stream waits for the stream's
  // work, which may allocate), then waits for them or, when a record
  // failed, keeps the block untracked with the streams left.
  void TrackStreamUses(Block* block) ABSL_LOCKS_EXCLUDED(mutex_);
  // TrackStreamUses again for every untracked block (a record failed): at
  // each miss and before every synchronization of the pool's own. A stream
  // that rejects every record (e.g. destroyed) keeps its block out of
  // circulation for good.
  void RetrackUntracked() ABSL_LOCKS_EXCLUDED(mutex_);
  // Adds the events recorded on streams[i] (recorded[i]) as pending for
  // `block`, gives back the others and keeps their streams in its
  // stream_uses; returns whether none is left.
  bool KeepRecordedEvents(Block* block,
                          const std::vector<openreg_stream>& streams,
                          std::vector<absl::StatusOr<DriverEvent>>& events,
                          const std::vector<bool>& recorded)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // A freed block with every use tracked: waits for its events, or is free.
  void AwaitEventsOrReturn(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Moves blocks whose events have all fired to the free sets. With `wait`,
  // blocks until every pending event has fired: only where no stream can
  // still run work that allocates (the pool's teardown, or with none
  // pending).
  void ProcessEvents(bool wait) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Makes the free blocks of `stream` (null: of every stream) freed up to
  // `token` settled, merging them with settled neighbours.
  void SettleLocked(openreg_stream stream, uint64_t token)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Whether a free block waits for its stream to catch up.
  bool HasUnsettledFreeBlocks() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Synchronizes the device (without the lock: it waits for work that may
  // allocate), returns the blocks whose events have fired and settles every
  // block freed before; for callers on the host (the out-of-memory path,
  // EmptyCache).
  void SynchronizeAndSettle() ABSL_LOCKS_EXCLUDED(mutex_);
  // Returns whole settled free segments to the driver.
  absl::Status ReleaseFreeSegments(const HistoryContext* context)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  absl::StatusOr<DriverEvent> TakeEvent() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  bool IsOversize(size_t size) const { return size >= config_.max_split_size; }
  absl::Status OutOfMemory(size_t requested, const absl::Status& driver_error,
                           const HistoryContext* context)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const Driver& driver_;
  const int32_t device_;
  const AllocatorConfig config_;
  MemoryHistory& history_;
  const PrivatePoolId id_;

  mutable absl::Mutex mutex_;
  // Every block handed out, by address: PyTorch frees by pointer alone.
  absl::flat_hash_map<void*, Block*> allocated_ ABSL_GUARDED_BY(mutex_);
  FreeSet small_free_ ABSL_GUARDED_BY(mutex_);
  FreeSet large_free_ ABSL_GUARDED_BY(mutex_);
  static constexpr size_t kSmallListCount = kSmallRequestLimit / kMinBlockSize;
  // Note [Reuse before merge]: per small block size (index size / 512 - 1),
  // and per large block size, the kFreeUnmerged blocks, the last freed
  // first, linked through next_unmerged. Large sizes vary more: their map is
  // emptied at every merge.
  std::vector<Block*> unmerged_ ABSL_GUARDED_BY(mutex_);
  // The small lists that may hold blocks: every list that does, and some
  // emptied since, which the next walk unmarks. A walk then costs what the
  // lists hold, not 2,048 steps.
  IndexSet<kSmallListCount> small_lists_held_
      ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<size_t, Block*> large_unmerged_ ABSL_GUARDED_BY(mutex_);
  size_t unmerged_count_ ABSL_GUARDED_BY(mutex_) = 0;
  // How many of them still wait for their stream (Block::stream not null).
  size_t unsettled_unmerged_ ABSL_GUARDED_BY(mutex_) = 0;
  // How many stream-ordered blocks have been freed: their free stamps.
  // Written under mutex_ only; atomic so that SettleToken() needs no lock.
  std::atomic<uint64_t> ordered_frees_{0};
  PendingEvents<Block*> pending_events_ ABSL_GUARDED_BY(mutex_);
  // Note [Settling without a synchronization]: one per stream, or a few
  // when threads missing at once each recorded one.
  PendingEvents<StreamPoint> settle_markers_ ABSL_GUARDED_BY(mutex_);
  std::vector<Block*> spare_blocks_ ABSL_GUARDED_BY(mutex_);
  // Freed blocks some stream's use of which has no event yet
  // (BlockState::kUntracked), tracked again by RetrackUntracked; those left
  // are deleted with the pool.
  std::vector<Block*> untracked_ ABSL_GUARDED_BY(mutex_);
  // Fired events kept for reuse: creating one is a driver call.
  std::vector<DriverEvent> spare_events_ ABSL_GUARDED_BY(mutex_);
  DeviceMemoryStats stats_ ABSL_GUARDED_BY(mutex_);
  // Each segment's first block, the context it was made in and its free
  // memory, by address: what snapshots walk. Changed only with driver
  // allocations; each Segment stays where it is, for its blocks point at its
  // `use`.
  struct Segment {
    Block* first = nullptr;
    HistoryContext history;
    SegmentUse use;
  };
  absl::btree_map<uintptr_t, std::unique_ptr<Segment>> segments_
      ABSL_GUARDED_BY(mutex_);
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_DEVICE_MEMORY_POOL_H_
