#include "core/runtime/memory/pinned_memory_pool.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "absl/strings/str_cat.h"

namespace openreg {

PinnedMemoryPool::PinnedMemoryPool(const Driver& driver) : driver_(driver) {}

PinnedMemoryPool::~PinnedMemoryPool() {
  EmptyCache().IgnoreError();  // nothing to report to at teardown
}

int PinnedMemoryPool::BucketOf(size_t size) {
  const size_t blocks = (size + kMinPinnedBlockSize - 1) / kMinPinnedBlockSize;
  return blocks <= 1 ? 0 : std::bit_width(blocks - 1);
}

absl::StatusOr<void*> PinnedMemoryPool::Allocate(size_t size) {
  const int bucket = BucketOf(size);
  if (bucket >= kBucketCount) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot pin ", size, " bytes: more than the largest pinned block, ",
        kMinPinnedBlockSize << (kBucketCount - 1), " bytes"));
  }
  const size_t block_size = kMinPinnedBlockSize << bucket;
  absl::MutexLock lock(&mutex_);
  ProcessEvents(/*wait=*/false);
  void* ptr = nullptr;
  if (!free_lists_[bucket].empty()) {
    ptr = free_lists_[bucket].back();
    free_lists_[bucket].pop_back();
  } else {
    absl::StatusOr<void*> fresh = driver_.HostMalloc(block_size);
    if (!fresh.ok()) return fresh.status();
    ptr = *fresh;
    blocks_[ptr].size = block_size;
    ++stats_.num_host_alloc;
    stats_.allocations.Increase(1);
    stats_.allocated_bytes.Increase(block_size);
  }
  blocks_[ptr].allocated = true;
  stats_.active_requests.Increase(1);
  stats_.active_bytes.Increase(block_size);
  return ptr;
}

bool PinnedMemoryPool::RecordEvent(void* ptr, int32_t device,
                                   openreg_stream stream) {
  absl::MutexLock lock(&mutex_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end() || !it->second.allocated) return false;
  absl::StatusOr<DriverEvent> event =
      driver_.CreateEvent(device, EventFlags::kDefault);
  if (event.ok() && driver_.EventRecord(event->get(), stream).ok()) {
    it->second.events.push_back(*std::move(event));
    return true;
  }
  // No event to wait for yet: one recorded later on the same stream stands
  // for it (TrackUntracked). (Synchronizing the stream instead would swallow
  // a failure that belongs to the user's next synchronization.)
  auto& untracked = it->second.untracked;
  const std::pair<int32_t, openreg_stream> use{device, stream};
  if (std::find(untracked.begin(), untracked.end(), use) == untracked.end()) {
    untracked.push_back(use);
  }
  return true;
}

bool PinnedMemoryPool::Free(void* ptr) {
  absl::MutexLock lock(&mutex_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end() || !it->second.allocated) return false;
  PinnedBlock& block = it->second;
  block.allocated = false;
  stats_.active_requests.Decrease(1);
  stats_.active_bytes.Decrease(block.size);
  for (DriverEvent& event : block.events) {
    pending_events_.Add(std::move(event), ptr);
    ++block.pending;
  }
  block.events.clear();
  if (!TrackUntracked(ptr, block)) {
    untracked_blocks_.push_back(ptr);
  } else if (block.pending == 0) {
    MakeAvailable(ptr, block);
  }
  return true;
}

bool PinnedMemoryPool::TrackUntracked(void* ptr, PinnedBlock& block) {
  size_t kept = 0;
  for (const auto& [device, stream] : block.untracked) {
    absl::StatusOr<DriverEvent> event =
        driver_.CreateEvent(device, EventFlags::kDefault);
    if (event.ok() && driver_.EventRecord(event->get(), stream).ok()) {
      pending_events_.Add(*std::move(event), ptr);
      ++block.pending;
    } else {
      block.untracked[kept++] = {device, stream};
    }
  }
  block.untracked.resize(kept);
  return kept == 0;
}

void PinnedMemoryPool::MakeAvailable(void* ptr, PinnedBlock& block) {
  if (!block.untracked.empty()) return;
  free_lists_[BucketOf(block.size)].push_back(ptr);
}

void PinnedMemoryPool::ProcessEvents(bool wait) {
  // A stream that rejects every record (e.g. destroyed) keeps its block out
  // of circulation for good.
  size_t still_untracked = 0;
  for (void* ptr : untracked_blocks_) {
    PinnedBlock& block = blocks_[ptr];
    if (!TrackUntracked(ptr, block)) {
      untracked_blocks_[still_untracked++] = ptr;
    } else if (block.pending == 0) {
      MakeAvailable(ptr, block);
    }
  }
  untracked_blocks_.resize(still_untracked);
  // A fired event is let go: DriverEvent destroys it.
  pending_events_.Sweep(driver_, wait, [this](DriverEvent, void* ptr)
                                           ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    PinnedBlock& block = blocks_[ptr];
    if (--block.pending == 0) MakeAvailable(ptr, block);
  });
}

absl::Status PinnedMemoryPool::EmptyCache() {
  absl::MutexLock lock(&mutex_);
  ProcessEvents(/*wait=*/true);
  absl::Status first_error;
  for (std::vector<void*>& free_list : free_lists_) {
    std::vector<void*> kept;
    for (void* ptr : free_list) {
      absl::Status freed = driver_.HostFree(ptr);
      if (!freed.ok()) {
        first_error.Update(freed);
        kept.push_back(ptr);
        continue;
      }
      const size_t size = blocks_[ptr].size;
      blocks_.erase(ptr);
      ++stats_.num_host_free;
      stats_.allocations.Decrease(1);
      stats_.allocated_bytes.Decrease(size);
    }
    free_list = std::move(kept);
  }
  return first_error;
}

HostMemoryStats PinnedMemoryPool::stats() const {
  absl::MutexLock lock(&mutex_);
  return stats_;
}

void PinnedMemoryPool::ResetPeakStats() {
  absl::MutexLock lock(&mutex_);
  stats_.ResetPeak();
}

void PinnedMemoryPool::ResetAccumulatedStats() {
  absl::MutexLock lock(&mutex_);
  stats_.ResetAccumulated();
}

}  // namespace openreg
