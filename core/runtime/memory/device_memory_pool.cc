#include "core/runtime/memory/device_memory_pool.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/runtime/memory/format_bytes.h"
#include "core/runtime/memory/size_classes.h"

namespace openreg {
namespace {

// The index of the unmerged list of small blocks of `size` bytes.
size_t SmallListIndex(size_t size) { return size / kMinBlockSize - 1; }

}  // namespace

DeviceMemoryPool::DeviceMemoryPool(const Driver& driver, int32_t device,
                                   const AllocatorConfig& config,
                                   MemoryHistory& history,
                                   const PrivatePoolId& id)
    : driver_(driver),
      device_(device),
      config_(config),
      history_(history),
      id_(id),
      unmerged_(kSmallListCount, nullptr) {
  if (config_.has_max_split_size()) {
    stats_.max_split_size = static_cast<int64_t>(config_.max_split_size);
  }
}

DeviceMemoryPool::~DeviceMemoryPool() {
  absl::MutexLock lock(&mutex_);
  // The runtime is shutting down: nothing runs on the device any more.
  SettleLocked(/*stream=*/nullptr, ordered_frees_.load());
  ProcessEvents(/*wait=*/true);
  MergeUnmerged();
  ReleaseFreeSegments(/*context=*/nullptr)
      .IgnoreError();  // nothing to report to at teardown
  // Free blocks left share a segment with an untracked block; their memory,
  // like the untracked blocks', stays with the driver until it shuts down.
  for (FreeSet* free_set : {&small_free_, &large_free_}) {
    for (Block* block : *free_set) delete block;
  }
  for (Block* block : untracked_) delete block;
  for (Block* block : spare_blocks_) delete block;
}

Block* DeviceMemoryPool::NewBlock() {
  if (spare_blocks_.empty()) {
    Block* block = new Block();
    block->pool = this;
    return block;
  }
  Block* block = spare_blocks_.back();
  spare_blocks_.pop_back();
  return block;
}

void DeviceMemoryPool::RecycleBlock(Block* block) {
  *block = Block();
  block->pool = this;
  spare_blocks_.push_back(block);
}

absl::StatusOr<Block*> DeviceMemoryPool::Allocate(
    size_t requested, absl::FunctionRef<void()> reclaim,
    openreg_stream stream, const StreamPoint& inside_work) {
  const size_t size = RoundedBlockSize(requested);
  // Gathered before locking: it may take the GIL (Note [Memory history]).
  HistoryContext gathered;
  const HistoryContext* context = nullptr;
  if (history_.enabled()) {
    gathered = history_.Gather(device_, /*for_free=*/false);
    context = &gathered;
  }
  // Whether this allocation has released the cache, counted once.
  bool released_cache = false;
  {
    // Note [Settling without a synchronization]: a miss first settles what
    // fired markers cover, and marks the streams still holding free blocks
    // that wait for them.
    Block* settled = nullptr;
    std::vector<NewSettleMarker> markers;
    bool untracked = false;
    {
      absl::MutexLock lock(&mutex_);
      if (Block* cached = TakeCached(size, stream, inside_work)) {
        return HandOut(cached, size, requested, stream, context);
      }
      if (SweepSettleMarkers()) {
        if (Block* cached = TakeCachedBlock(size, stream, inside_work)) {
          settled = HandOut(cached, size, requested, stream, context);
        }
      }
      markers = NewSettleMarkers();
      untracked = !untracked_.empty();
    }
    // Recorded without the lock: a record onto a full stream waits for the
    // stream's work, which may allocate.
    RecordSettleMarkers(std::move(markers));
    if (untracked) RetrackUntracked();
    if (settled != nullptr) return settled;
  }
  {
    absl::MutexLock lock(&mutex_);
    absl::StatusOr<Block*> block =
        FindOrAllocate(size, stream, inside_work, context, released_cache);
    if (block.ok()) return HandOut(*block, size, requested, stream, context);
    if (block.status().code() != absl::StatusCode::kResourceExhausted) {
      return block.status();
    }
  }
  // Queued work may own memory it no longer needs once it has run; its owner
  // finishes it, outside our lock, since that frees blocks.
  reclaim();
  // Recorded before the synchronization below, an untracked block's events
  // fire in it.
  RetrackUntracked();
  // Blocks freed on streams serve their stream only; once the device has
  // caught up they serve this request too.
  if (stream != nullptr) SynchronizeAndSettle();
  absl::MutexLock lock(&mutex_);
  ++stats_.num_sync_all_streams;
  absl::StatusOr<Block*> block =
      FindOrAllocate(size, stream, inside_work, context, released_cache);
  if (block.ok()) return HandOut(*block, size, requested, stream, context);
  if (block.status().code() != absl::StatusCode::kResourceExhausted) {
    return block.status();
  }
  ++stats_.num_ooms;
  return OutOfMemory(requested, block.status(), context);
}

void DeviceMemoryPool::RecordHistory(TraceAction action, const void* address,
                                     size_t size,
                                     const HistoryContext& context) {
  TraceEntry entry;
  entry.action = action;
  entry.address = reinterpret_cast<uintptr_t>(address);
  entry.size = size;
  entry.stream = context.stream;
  entry.time_us = absl::ToUnixMicros(absl::Now());
  entry.frames = context.frames;
  entry.pool = id_;
  history_.Record(std::move(entry));
}

Block* DeviceMemoryPool::HandOut(Block* block, size_t size, size_t requested,
                                 openreg_stream stream,
                                 const HistoryContext* context) {
  CountFree(*block, /*freed=*/false);
  block->state = BlockState::kAllocated;
  // The rest of a split keeps the stream the block was free on.
  MaybeSplit(block, size);
  block->stream = stream;
  allocated_.emplace(block->ptr, block);
  block->requested = requested;
  if (context != nullptr) {
    block->history = *context;
    RecordHistory(TraceAction::kAlloc, block->ptr, block->size, *context);
  }
  stats_.allocation.Increase(block->small, 1);
  stats_.allocated_bytes.Increase(block->small, block->size);
  stats_.requested_bytes.Increase(block->small, requested);
  stats_.active.Increase(block->small, 1);
  stats_.active_bytes.Increase(block->small, block->size);
  if (IsOversize(block->size)) stats_.oversize_allocations.Increase(1);
  return block;
}

Block* DeviceMemoryPool::TakeCached(size_t size, openreg_stream stream,
                                    const StreamPoint& inside_work) {
  ProcessEvents(/*wait=*/false);
  if (stream != nullptr) {
    // The host takes its stream's memory wherever it is, before settled
    // memory, all that work can take but for its stream's blocks freed
    // before it. Its stream's blocks may hide on the lists: merged before
    // settled memory is taken.
    if (Block* own = TakeUnmergedOf(size, stream)) return own;
    if (Block* own = TakeCachedBlockOf(size, stream)) return own;
    if (unsettled_unmerged_ > 0) {
      MergeUnmerged();
      if (Block* own = TakeCachedBlockOf(size, stream)) return own;
    }
  }
  if (Block* settled = TakeUnmergedOf(size, /*stream=*/nullptr)) {
    return settled;
  }
  if (inside_work.stream != nullptr) {
    if (Block* before = TakeUnmergedOf(size, inside_work.stream,
                                       inside_work.token)) {
      return before;
    }
  }
  if (Block* cached = TakeCachedBlock(size, stream, inside_work)) {
    return cached;
  }
  if (unmerged_count_ > 0) {
    MergeUnmerged();
    if (Block* cached = TakeCachedBlock(size, stream, inside_work)) {
      return cached;
    }
  }
  return nullptr;
}

bool DeviceMemoryPool::SweepSettleMarkers() {
  bool settled = false;
  settle_markers_.Sweep(
      driver_, /*wait=*/false,
      [this, &settled](DriverEvent event, StreamPoint point)
          ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
            spare_events_.push_back(std::move(event));
            SettleLocked(point.stream, point.token);
            settled = true;
          });
  return settled;
}

std::vector<DeviceMemoryPool::NewSettleMarker>
DeviceMemoryPool::NewSettleMarkers() {
  std::vector<NewSettleMarker> markers;
  // Every free block is in a free set here (TakeCached merged the rest),
  // where each stream's blocks sort together after the settled ones: visit
  // the first block past each stream's.
  for (FreeSet* free_set : {&small_free_, &large_free_}) {
    FreeSetKey key = FreeSetKey::After(/*stream=*/nullptr);
    for (auto it = free_set->upper_bound(key); it != free_set->end();
         it = free_set->upper_bound(key)) {
      key.stream = (*it)->stream;
      const auto marks_it = [&key](const StreamPoint& point) {
        return point.stream == key.stream;
      };
      if (settle_markers_.AnyKey(marks_it) ||
          std::any_of(markers.begin(), markers.end(),
                      [&](const NewSettleMarker& marker) {
                        return marks_it(marker.point);
                      })) {
        continue;
      }
      absl::StatusOr<DriverEvent> event = TakeEvent();
      if (!event.ok()) continue;  // the slow path then takes a new segment
      markers.push_back({*std::move(event),
                         {key.stream, ordered_frees_.load(
                                          std::memory_order_relaxed)}});
    }
  }
  return markers;
}

void DeviceMemoryPool::RecordSettleMarkers(
    std::vector<NewSettleMarker> markers) {
  for (NewSettleMarker& marker : markers) {
    const bool recorded =
        driver_.EventRecord(marker.event.get(), marker.point.stream).ok();
    // A driver that runs work as it is enqueued has passed the marker.
    const bool passed =
        recorded && driver_.EventQuery(marker.event.get()).value_or(false);
    absl::MutexLock lock(&mutex_);
    if (passed) SettleLocked(marker.point.stream, marker.point.token);
    if (recorded && !passed) {
      settle_markers_.Add(std::move(marker.event), marker.point);
    } else {
      spare_events_.push_back(std::move(marker.event));
    }
  }
}

absl::StatusOr<Block*> DeviceMemoryPool::FindOrAllocate(
    size_t size, openreg_stream stream, const StreamPoint& inside_work,
    const HistoryContext* context, bool& released_cache) {
  if (Block* cached = TakeCached(size, stream, inside_work)) return cached;
  const bool small = IsSmallBlockSize(size);
  if (stream != nullptr && AdoptSettledNeighbours(stream, small)) {
    if (Block* own = TakeCachedBlockOf(size, stream)) return own;
  }
  const size_t segment_size = SegmentSizeFor(size);
  absl::StatusOr<Block*> block = AllocateSegment(segment_size, small, context);
  if (block.ok() || !config_.release_on_oom ||
      block.status().code() != absl::StatusCode::kResourceExhausted) {
    return block;
  }
  // The cache may hold the memory in segments of the wrong size or pool.
  if (!released_cache) ++stats_.num_alloc_retries;
  released_cache = true;
  absl::Status released = ReleaseFreeSegments(context);
  if (!released.ok()) return released;
  return AllocateSegment(segment_size, small, context);
}

bool DeviceMemoryPool::AdoptSettledNeighbours(openreg_stream stream,
                                              bool small) {
  FreeSet& free_set = FreeSetFor(small);
  std::vector<Block*> own;
  for (auto it = free_set.lower_bound(FreeSetKey{stream});
       it != free_set.end() && (*it)->stream == stream; ++it) {
    own.push_back(*it);
  }
  const auto free_on = [](const Block* neighbour, openreg_stream on) {
    return neighbour != nullptr && neighbour->state == BlockState::kFree &&
           neighbour->stream == on;
  };
  bool adopted = false;
  for (Block* block : own) {
    for (Block* neighbour : {block->prev, block->next}) {
      if (!free_on(neighbour, nullptr)) continue;
      EraseFree(neighbour);
      neighbour->stream = stream;
      neighbour->free_stamp = block->free_stamp;
      InsertFree(neighbour);
      adopted = true;
    }
    // Blocks of one stream that touch were merged already, so a merge here
    // absorbs an adopted neighbour, or `block` itself into the run an
    // earlier one made: every block of `own` is still there at its turn.
    if (free_on(block->prev, stream) || free_on(block->next, stream)) {
      EraseFree(block);
      MergeIntoFreeSet(block);
    }
  }
  return adopted;
}

Block* DeviceMemoryPool::TakeCachedBlock(size_t size, openreg_stream stream,
                                         const StreamPoint& inside_work) {
  if (stream != nullptr) {
    if (Block* own = TakeCachedBlockOf(size, stream)) return own;
  }
  if (Block* settled = TakeCachedBlockOf(size, /*stream=*/nullptr)) {
    return settled;
  }
  // Last, since it may look at many of the stream's blocks: a merged block
  // bears the latest stamp of its parts.
  if (inside_work.stream == nullptr) return nullptr;
  return TakeCachedBlockOf(size, inside_work.stream, inside_work.token);
}

Block* DeviceMemoryPool::TakeCachedBlockOf(size_t size, openreg_stream stream,
                                           uint64_t token) {
  FreeSet& free_set = FreeSetFor(IsSmallBlockSize(size));
  auto it = free_set.lower_bound(FreeSetKey{stream, size});
  while (it != free_set.end() && (*it)->stream == stream &&
         (*it)->free_stamp > token) {
    ++it;
  }
  if (it == free_set.end() || (*it)->stream != stream) return nullptr;
  Block* block = *it;
  if (config_.has_max_split_size()) {
    // Oversize blocks are kept for oversize requests, and an oversize request
    // does not take a block that would waste a whole large segment.
    if (!IsOversize(size) && IsOversize(block->size)) return nullptr;
    if (IsOversize(size) && block->size >= size + kLargeSegmentSize) {
      return nullptr;
    }
  }
  EraseFree(block, it);
  return block;
}

absl::StatusOr<Block*> DeviceMemoryPool::AllocateSegment(
    size_t segment_size, bool small, const HistoryContext* context) {
  absl::StatusOr<void*> ptr = driver_.DeviceMalloc(device_, segment_size);
  if (!ptr.ok()) return ptr.status();
  ++stats_.num_device_alloc;
  stats_.segment.Increase(small, 1);
  stats_.reserved_bytes.Increase(small, segment_size);
  if (IsOversize(segment_size)) stats_.oversize_segments.Increase(1);
  auto owned = std::make_unique<Segment>();
  Segment& segment = *owned;
  segments_.emplace(reinterpret_cast<uintptr_t>(*ptr), std::move(owned));
  // Whole and free until HandOut takes it.
  segment.use = SegmentUse{segment_size, segment_size, /*free_runs=*/1};
  Block* block = NewBlock();
  block->ptr = *ptr;
  block->size = segment_size;
  block->small = small;
  block->segment = &segment.use;
  segment.first = block;
  if (context != nullptr) {
    segment.history = *context;
    RecordHistory(TraceAction::kSegmentAlloc, *ptr, segment_size, *context);
  }
  return block;
}

void DeviceMemoryPool::MaybeSplit(Block* block, size_t size) {
  const size_t remaining = block->size - size;
  const bool worth_splitting =
      block->small ? remaining >= kMinBlockSize
                   : remaining > kSmallRequestLimit && !IsOversize(size);
  if (!worth_splitting) return;
  Block* rest = NewBlock();
  rest->ptr = block->begin() + size;
  rest->size = remaining;
  rest->small = block->small;
  // Memory freed on a stream that has not caught up stays that stream's,
  // split or not: work queued on it may still use the rest.
  rest->stream = block->stream;
  rest->free_stamp = block->free_stamp;
  rest->segment = block->segment;
  rest->prev = block;
  rest->next = block->next;
  if (block->next != nullptr) block->next->prev = rest;
  block->next = rest;
  block->size = size;
  CountFree(*rest, /*freed=*/true);
  InsertFree(rest);
}

void DeviceMemoryPool::InsertFree(Block* block) {
  block->state = BlockState::kFree;
  FreeSetFor(block->small).insert(block);
}

void DeviceMemoryPool::EraseFree(Block* block) {
  FreeSet& free_set = FreeSetFor(block->small);
  EraseFree(block, free_set.find(block));
}

void DeviceMemoryPool::EraseFree(Block* block, FreeSet::iterator position) {
  // Erasing by iterator: erasing by key would search twice (equal_range).
  FreeSetFor(block->small).erase(position);
}

void DeviceMemoryPool::KeepUnmerged(Block* block) {
  block->state = BlockState::kFreeUnmerged;
  Block** head = nullptr;
  if (block->small) {
    const size_t index = SmallListIndex(block->size);
    small_lists_held_.Insert(index);
    head = &unmerged_[index];
  } else {
    head = &large_unmerged_[block->size];
  }
  block->next_unmerged = *head;
  *head = block;
  ++unmerged_count_;
  if (block->stream != nullptr) ++unsettled_unmerged_;
}

Block* DeviceMemoryPool::TakeUnmergedOf(size_t size, openreg_stream stream,
                                        uint64_t token) {
  Block** link = nullptr;
  if (IsSmallBlockSize(size)) {
    link = &unmerged_[SmallListIndex(size)];
  } else {
    auto it = large_unmerged_.find(size);
    if (it == large_unmerged_.end()) return nullptr;
    link = &it->second;
  }
  // A program on one stream finds its block at the head; the bound keeps a
  // list of other streams' blocks from costing a walk.
  constexpr int kLookedAt = 4;
  for (int looked = 0; *link != nullptr && looked < kLookedAt; ++looked) {
    if ((*link)->stream == stream && (*link)->free_stamp <= token) {
      return UnlinkUnmerged(*link);
    }
    link = &(*link)->next_unmerged;
  }
  return nullptr;
}

Block* DeviceMemoryPool::UnlinkUnmerged(Block*& link) {
  Block* block = link;
  link = block->next_unmerged;
  block->next_unmerged = nullptr;
  if (block->stream != nullptr) --unsettled_unmerged_;
  --unmerged_count_;
  return block;
}

void DeviceMemoryPool::MergeUnmerged() {
  ForEachUnmergedList([this](Block*& head) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                          mutex_) {
    while (head != nullptr) {
      Block* block = UnlinkUnmerged(head);
      block->state = BlockState::kFree;
      MergeIntoFreeSet(block);
    }
  });
  large_unmerged_.clear();
}

void DeviceMemoryPool::ForEachUnmergedList(
    absl::FunctionRef<void(Block*& head)> visit) {
  // The small lists are one per size (2,048): only those marked held are
  // walked, and those found empty unmarked.
  small_lists_held_.ForEach([&](size_t index)
                                ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    Block*& head = unmerged_[index];
    if (head != nullptr) visit(head);
    if (head == nullptr) small_lists_held_.Erase(index);
  });
  for (auto& [size, head] : large_unmerged_) {
    if (head != nullptr) visit(head);
  }
}

void DeviceMemoryPool::CountFree(const Block& block, bool freed) {
  SegmentUse& use = *block.segment;
  const int64_t free_neighbours =
      int64_t{block.prev != nullptr && block.prev->is_free()} +
      int64_t{block.next != nullptr && block.next->is_free()};
  // A block freed alone starts a run, beside one extends it, between two
  // joins them; handed out, the reverse.
  int64_t runs = 1 - free_neighbours;
  int64_t bytes = static_cast<int64_t>(block.size);
  if (!freed) {
    runs = -runs;
    bytes = -bytes;
  }
  // inactive_split counts a segment's free runs and bytes unless the
  // segment is wholly free: merged, it is then one unsplit block. A change
  // of free bytes moves the segment into or out of that state, not both.
  int64_t counted_runs = runs;
  int64_t counted_bytes = bytes;
  if (use.wholly_free()) {
    counted_runs += use.free_runs;
    counted_bytes += static_cast<int64_t>(use.free_bytes);
  }
  use.free_bytes += bytes;  // modular: right when negative too
  use.free_runs += runs;
  if (use.wholly_free()) {
    counted_runs -= use.free_runs;
    counted_bytes -= static_cast<int64_t>(use.free_bytes);
  }
  stats_.inactive_split.Change(block.small, counted_runs);
  stats_.inactive_split_bytes.Change(block.small, counted_bytes);
}

void DeviceMemoryPool::ReturnToFreeSet(Block* block) {
  stats_.active.Decrease(block->small, 1);
  stats_.active_bytes.Decrease(block->small, block->size);
  if (history_.enabled()) {
    RecordHistory(TraceAction::kFreeCompleted, block->ptr, block->size,
                  HistoryContext{nullptr, block->history.stream});
  }
  block->history = HistoryContext();
  CountFree(*block, /*freed=*/true);
  KeepUnmerged(block);
}

void DeviceMemoryPool::MergeIntoFreeSet(Block* block) {
  // Only blocks of one stream merge: the merged block is reused in that
  // stream's order. The later free stamp stands for the whole.
  const openreg_stream stream = block->stream;
  const auto mergeable = [stream](const Block* neighbour) {
    return neighbour != nullptr && neighbour->state == BlockState::kFree &&
           neighbour->stream == stream;
  };
  if (Block* prev = block->prev; mergeable(prev)) {
    prev->free_stamp = std::max(prev->free_stamp, block->free_stamp);
    EraseFree(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (prev->next != nullptr) prev->next->prev = prev;
    RecycleBlock(block);
    block = prev;
  }
  if (Block* next = block->next; mergeable(next)) {
    block->free_stamp = std::max(block->free_stamp, next->free_stamp);
    EraseFree(next);
    block->size += next->size;
    block->next = next->next;
    if (block->next != nullptr) block->next->prev = block;
    RecycleBlock(next);
  }
  InsertFree(block);
}

void DeviceMemoryPool::Free(Block* block) {
  HistoryContext gathered;
  const HistoryContext* context = nullptr;
  if (history_.enabled()) {
    gathered = history_.Gather(device_, /*for_free=*/true);
    context = &gathered;
  }
  {
    absl::MutexLock lock(&mutex_);
    allocated_.erase(block->ptr);
    if (!FreeLocked(block, context)) return;
  }
  TrackStreamUses(block);
}

bool DeviceMemoryPool::FreeAt(void* ptr) {
  HistoryContext gathered;
  const HistoryContext* context = nullptr;
  if (history_.enabled()) {
    // Gathering may take the GIL (Note [Memory history]): not under the
    // lock, and only for this pool's own pointers.
    if (FindAllocated(ptr) == nullptr) return false;
    gathered = history_.Gather(device_, /*for_free=*/true);
    context = &gathered;
  }
  Block* block = nullptr;
  {
    absl::MutexLock lock(&mutex_);
    auto it = allocated_.find(ptr);
    if (it == allocated_.end()) return false;
    block = it->second;
    allocated_.erase(it);
    if (!FreeLocked(block, context)) return true;
  }
  TrackStreamUses(block);
  return true;
}

Block* DeviceMemoryPool::FindAllocated(void* ptr) const {
  absl::MutexLock lock(&mutex_);
  auto it = allocated_.find(ptr);
  return it == allocated_.end() ? nullptr : it->second;
}

bool DeviceMemoryPool::FreeLocked(Block* block,
                                  const HistoryContext* context) {
  if (context != nullptr) {
    RecordHistory(TraceAction::kFreeRequested, block->ptr, block->size,
                  *context);
  }
  stats_.allocation.Decrease(block->small, 1);
  stats_.allocated_bytes.Decrease(block->small, block->size);
  stats_.requested_bytes.Decrease(block->small, block->requested);
  if (IsOversize(block->size)) stats_.oversize_allocations.Decrease(1);
  block->requested = 0;
  // Stamped when freed, not when its events let it go: a settle covers the
  // frees made before its token.
  if (block->stream != nullptr) {
    // Released: a point taken after this store is after the free.
    block->free_stamp = ordered_frees_.load(std::memory_order_relaxed) + 1;
    ordered_frees_.store(block->free_stamp, std::memory_order_release);
  }
  if (block->stream_uses.empty()) {
    ReturnToFreeSet(block);
    return false;
  }
  // Out of every list until TrackStreamUses has recorded its events.
  block->state = BlockState::kAwaitingEvents;
  return true;
}

void DeviceMemoryPool::TrackStreamUses(Block* block) {
  // The block is the caller's alone until it is put in a list below.
  std::vector<openreg_stream> streams;
  std::vector<absl::StatusOr<DriverEvent>> events;
  {
    absl::MutexLock lock(&mutex_);
    streams.assign(block->stream_uses.begin(), block->stream_uses.end());
    for (size_t i = 0; i < streams.size(); ++i) events.push_back(TakeEvent());
  }
  // Without the lock: a record onto a full stream waits for the stream's
  // work, which may allocate.
  std::vector<bool> recorded(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    recorded[i] =
        events[i].ok() && driver_.EventRecord(events[i]->get(), streams[i]).ok();
  }
  absl::MutexLock lock(&mutex_);
  if (!KeepRecordedEvents(block, streams, events, recorded)) {
    // Without an event there is no telling when that stream is done with the
    // block: it stays active, and out of circulation, until a record works.
    block->state = BlockState::kUntracked;
    untracked_.push_back(block);
    return;
  }
  AwaitEventsOrReturn(block);
}

void DeviceMemoryPool::RetrackUntracked() {
  std::vector<Block*> untracked;
  {
    absl::MutexLock lock(&mutex_);
    untracked.swap(untracked_);
  }
  // An event recorded now on a stream whose earlier record failed fires
  // after that use: streams run in order. Each block is the caller's alone
  // until TrackStreamUses puts it in a list again.
  for (Block* block : untracked) TrackStreamUses(block);
}

bool DeviceMemoryPool::KeepRecordedEvents(
    Block* block, const std::vector<openreg_stream>& streams,
    std::vector<absl::StatusOr<DriverEvent>>& events,
    const std::vector<bool>& recorded) {
  size_t kept = 0;
  for (size_t i = 0; i < streams.size(); ++i) {
    if (recorded[i]) {
      pending_events_.Add(*std::move(events[i]), block);
      ++block->pending_events;
      continue;
    }
    if (events[i].ok()) spare_events_.push_back(*std::move(events[i]));
    block->stream_uses[kept++] = streams[i];
  }
  block->stream_uses.resize(kept);
  return kept == 0;
}

void DeviceMemoryPool::AwaitEventsOrReturn(Block* block) {
  if (block->pending_events > 0) {
    block->state = BlockState::kAwaitingEvents;
    return;
  }
  ReturnToFreeSet(block);
}

void DeviceMemoryPool::RecordStream(Block* block, openreg_stream stream) {
  absl::MutexLock lock(&mutex_);
  for (openreg_stream recorded : block->stream_uses) {
    if (recorded == stream) return;
  }
  block->stream_uses.push_back(stream);
}

absl::StatusOr<DriverEvent> DeviceMemoryPool::TakeEvent() {
  if (!spare_events_.empty()) {
    DriverEvent event = std::move(spare_events_.back());
    spare_events_.pop_back();
    return event;
  }
  return driver_.CreateEvent(device_, EventFlags::kDefault);
}

void DeviceMemoryPool::ProcessEvents(bool wait) {
  pending_events_.Sweep(driver_, wait, [this](DriverEvent event, Block* block)
                                           ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    spare_events_.push_back(std::move(event));
    if (--block->pending_events == 0 &&
        block->state == BlockState::kAwaitingEvents) {
      ReturnToFreeSet(block);
    }
  });
}

absl::Status DeviceMemoryPool::ReleaseFreeSegments(
    const HistoryContext* context) {
  absl::Status first_error;
  for (FreeSet* free_set : {&small_free_, &large_free_}) {
    // Settled blocks come first; blocks of a stream may still be in use.
    for (auto it = free_set->begin();
         it != free_set->end() && (*it)->stream == nullptr;) {
      Block* block = *it;
      if (block->is_split()) {
        ++it;
        continue;
      }
      absl::Status freed = driver_.DeviceFree(device_, block->ptr);
      if (!freed.ok()) {
        first_error.Update(freed);
        ++it;
        continue;
      }
      it = free_set->erase(it);
      segments_.erase(reinterpret_cast<uintptr_t>(block->ptr));
      if (context != nullptr) {
        RecordHistory(TraceAction::kSegmentFree, block->ptr, block->size,
                      *context);
      }
      ++stats_.num_device_free;
      stats_.segment.Decrease(block->small, 1);
      stats_.reserved_bytes.Decrease(block->small, block->size);
      if (IsOversize(block->size)) stats_.oversize_segments.Decrease(1);
      RecycleBlock(block);
    }
  }
  return first_error;
}

absl::Status DeviceMemoryPool::EmptyCache() {
  HistoryContext gathered;
  const HistoryContext* context = nullptr;
  if (history_.enabled()) {
    gathered = history_.Gather(device_, /*for_free=*/true);
    context = &gathered;
  }
  // Recorded before the synchronization below, an untracked block's events
  // fire in it.
  RetrackUntracked();
  {
    absl::MutexLock lock(&mutex_);
    // Waiting for events with the lock held would wait for their streams'
    // work, which may allocate: with events pending, synchronize first.
    if (!HasUnsettledFreeBlocks() && pending_events_.empty() &&
        untracked_.empty()) {
      MergeUnmerged();
      return ReleaseFreeSegments(context);
    }
  }
  SynchronizeAndSettle();
  absl::MutexLock lock(&mutex_);
  MergeUnmerged();
  return ReleaseFreeSegments(context);
}

uint64_t DeviceMemoryPool::SettleToken() const {
  return ordered_frees_.load(std::memory_order_acquire);
}

void DeviceMemoryPool::Settle(openreg_stream stream, uint64_t token) {
  absl::MutexLock lock(&mutex_);
  SettleLocked(stream, token);
}

void DeviceMemoryPool::SettleLocked(openreg_stream stream, uint64_t token) {
  const auto settles = [stream, token](const Block* block) {
    return block->stream != nullptr &&
           (stream == nullptr || block->stream == stream) &&
           block->free_stamp <= token;
  };
  // Unmerged blocks are not in a set keyed by stream: walked only while one
  // is unsettled. Small ones are relabelled and stay on their lists, for the
  // next op of their size; large ones merge with settled neighbours, as
  // those in the free sets do, so that settled memory, served best fit, is
  // not left in pieces between the blocks freed since
  // (Note [Reuse before merge]).
  std::vector<Block*> settling_unmerged;
  if (unsettled_unmerged_ > 0) {
    ForEachUnmergedList([&](Block*& head) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                            mutex_) {
      for (Block** link = &head; *link != nullptr;) {
        Block* block = *link;
        if (!settles(block)) {
          link = &block->next_unmerged;
        } else if (block->small) {
          block->stream = nullptr;
          --unsettled_unmerged_;
          link = &block->next_unmerged;
        } else {
          settling_unmerged.push_back(UnlinkUnmerged(*link));
        }
      }
    });
  }
  for (Block* block : settling_unmerged) {
    block->state = BlockState::kFree;
    block->stream = nullptr;
    block->free_stamp = 0;
    MergeIntoFreeSet(block);
  }
  std::vector<Block*> settling;
  for (FreeSet* free_set : {&small_free_, &large_free_}) {
    // Settled blocks sort first, every stream's blocks after them: start
    // past the last settled block, or before the stream's first.
    const FreeSetKey key = stream == nullptr
                               ? FreeSetKey::After(/*stream=*/nullptr)
                               : FreeSetKey{stream};
    for (auto it = free_set->upper_bound(key);
         it != free_set->end(); ++it) {
      if (stream != nullptr && (*it)->stream != stream) break;
      if (settles(*it)) settling.push_back(*it);
    }
  }
  for (Block* block : settling) {
    EraseFree(block);
    block->stream = nullptr;
    block->free_stamp = 0;
    MergeIntoFreeSet(block);
  }
}

bool DeviceMemoryPool::HasUnsettledFreeBlocks() const {
  for (const FreeSet* free_set : {&small_free_, &large_free_}) {
    if (!free_set->empty() && (*free_set->rbegin())->stream != nullptr) {
      return true;
    }
  }
  return unsettled_unmerged_ > 0;
}

void DeviceMemoryPool::SynchronizeAndSettle() {
  const uint64_t token = SettleToken();
  // A failed stream runs nothing more either: its blocks are as free.
  driver_.DeviceSynchronize(device_).IgnoreError();
  absl::MutexLock lock(&mutex_);
  // Every event recorded before the wait has fired; the blocks they return
  // were freed before the token, so they settle with the rest. One recorded
  // since may wait for work that allocates: not waited for under the lock.
  ProcessEvents(/*wait=*/false);
  SettleLocked(/*stream=*/nullptr, token);
}

absl::Status DeviceMemoryPool::OutOfMemory(size_t requested,
                                           const absl::Status& driver_error,
                                           const HistoryContext* context) {
  absl::StatusOr<MemoryInfo> info = driver_.MemGetInfo(device_);
  const uint64_t total = info.ok() ? info->total_bytes : 0;
  const uint64_t free = info.ok() ? info->free_bytes : 0;
  if (context != nullptr) {
    TraceEntry entry;
    entry.action = TraceAction::kOom;
    entry.size = requested;
    entry.stream = context->stream;
    entry.time_us = absl::ToUnixMicros(absl::Now());
    entry.frames = context->frames;
    entry.pool = id_;
    entry.device_free = free;
    history_.Record(std::move(entry));
  }
  const auto& all = [](const PoolStats& stats) {
    return static_cast<uint64_t>(stats[StatPool::kAll].current);
  };
  const uint64_t allocated = all(stats_.allocated_bytes);
  const uint64_t reserved = all(stats_.reserved_bytes);
  return absl::ResourceExhaustedError(absl::StrCat(
      "openreg out of memory on device openreg:", device_,
      ": tried to allocate ", FormatBytes(requested), ". The device has a "
      "capacity of ", FormatBytes(total), ", of which ", FormatBytes(free),
      " is free; PyTorch has ", FormatBytes(allocated), " allocated and ",
      FormatBytes(reserved), " reserved by the caching allocator (",
      FormatBytes(reserved - allocated), " reserved but unallocated). Free "
      "tensors you no longer need, use smaller batches, or raise "
      "OPENREG_DEVICE_MEMORY (e.g. OPENREG_DEVICE_MEMORY=32GiB) before the "
      "device is first used; if much is reserved but unallocated, "
      "OPENREG_ALLOC_CONF=max_split_size_mb:<MiB> limits fragmentation. "
      "(driver: ", driver_error.message(), ")"));
}

void DeviceMemoryPool::Snapshot(std::vector<SegmentSnapshot>& segments) const {
  absl::MutexLock lock(&mutex_);
  for (const auto& [address, segment] : segments_) {
    SegmentSnapshot& out = segments.emplace_back();
    out.device = device_;
    out.address = address;
    out.stream = segment->history.stream;
    out.small = segment->first->small;
    out.pool = id_;
    out.frames = segment->history.frames;
    for (const Block* block = segment->first; block != nullptr;
         block = block->next) {
      out.total_size += block->size;
      if (block->is_free()) {
        // Note [Free memory counted as merged]: a run is one block.
        if (!out.blocks.empty() &&
            out.blocks.back().state == BlockState::kFree) {
          out.blocks.back().size += block->size;
        } else {
          out.blocks.push_back(BlockSnapshot{
              reinterpret_cast<uintptr_t>(block->ptr), block->size,
              /*requested=*/0, BlockState::kFree, /*frames=*/nullptr});
        }
        continue;
      }
      out.active_size += block->size;
      if (block->state == BlockState::kAllocated) {
        out.allocated_size += block->size;
        out.requested_size += block->requested;
      }
      out.blocks.push_back(
          BlockSnapshot{reinterpret_cast<uintptr_t>(block->ptr), block->size,
                        block->requested, block->state, block->history.frames});
    }
  }
}

DeviceMemoryStats DeviceMemoryPool::stats() const {
  absl::MutexLock lock(&mutex_);
  return stats_;
}

void DeviceMemoryPool::ResetPeakStats() {
  absl::MutexLock lock(&mutex_);
  stats_.ResetPeak();
}

void DeviceMemoryPool::ResetAccumulatedStats() {
  absl::MutexLock lock(&mutex_);
  stats_.ResetAccumulated();
}

}  // namespace openreg
