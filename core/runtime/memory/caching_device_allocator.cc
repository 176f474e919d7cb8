#include "core/runtime/memory/caching_device_allocator.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace openreg {

CachingDeviceAllocator::CachingDeviceAllocator(const Driver& driver,
                                               int32_t device_count,
                                               const AllocatorConfig& config)
    : driver_(driver), config_(config) {
  histories_.reserve(device_count);
  pools_.reserve(device_count);
  for (int32_t device = 0; device < device_count; ++device) {
    histories_.push_back(std::make_unique<MemoryHistory>());
    pools_.push_back(std::make_unique<DeviceMemoryPool>(driver, device, config,
                                                        *histories_.back()));
  }
}

absl::StatusOr<Block*> CachingDeviceAllocator::Allocate(
    int32_t device, size_t size, absl::FunctionRef<void()> reclaim,
    openreg_stream stream, const StreamPoint& inside_work) {
  return pools_[device]->Allocate(size, reclaim, stream, inside_work);
}

absl::StatusOr<Block*> CachingDeviceAllocator::AllocateFromPrivatePool(
    int32_t device, const PrivatePoolId& pool, size_t size,
    absl::FunctionRef<void()> reclaim) {
  DeviceMemoryPool* private_pool = nullptr;
  {
    absl::MutexLock lock(&mutex_);
    auto it = private_pools_.find({device, pool});
    if (it == private_pools_.end() || it->second.users == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("private pool (", pool.first, ", ", pool.second,
                       ") of device ", device, " is not in use"));
    }
    // Never destroyed (see private_pools_), so usable after the lock.
    private_pool = it->second.pool.get();
  }
  return private_pool->Allocate(size, reclaim);
}

void CachingDeviceAllocator::UsePrivatePool(int32_t device,
                                            const PrivatePoolId& pool) {
  absl::MutexLock lock(&mutex_);
  PrivatePool& entry = private_pools_[{device, pool}];
  if (entry.pool == nullptr) {
    entry.pool = std::make_unique<DeviceMemoryPool>(driver_, device, config_,
                                                    *histories_[device], pool);
  }
  if (entry.users++ == 0) retired_.erase(entry.pool.get());
}

absl::Status CachingDeviceAllocator::ReleasePrivatePool(
    int32_t device, const PrivatePoolId& pool) {
  DeviceMemoryPool* retired = nullptr;
  {
    absl::MutexLock lock(&mutex_);
    auto it = private_pools_.find({device, pool});
    if (it == private_pools_.end() || it->second.users == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "releasing private pool (", pool.first, ", ", pool.second,
          ") of device ", device, ", which has no users"));
    }
    if (--it->second.users > 0) return absl::OkStatus();
    retired = it->second.pool.get();
    retired_.insert(retired);
  }
  return retired->EmptyCache();
}

size_t CachingDeviceAllocator::PrivatePoolReservedBytes(
    int32_t device, const PrivatePoolId& pool) const {
  absl::MutexLock lock(&mutex_);
  auto it = private_pools_.find({device, pool});
  if (it == private_pools_.end()) return 0;
  return it->second.pool->stats().reserved_bytes[StatPool::kAll].current;
}

std::vector<DeviceMemoryPool*> CachingDeviceAllocator::PrivatePools() const {
  std::vector<DeviceMemoryPool*> pools;
  absl::MutexLock lock(&mutex_);
  pools.reserve(private_pools_.size());
  for (const auto& [key, private_pool] : private_pools_) {
    pools.push_back(private_pool.pool.get());
  }
  return pools;
}

bool CachingDeviceAllocator::FreeAt(void* ptr) {
  // A device's own pool serves nearly every free, and never retires.
  for (const auto& pool : pools_) {
    if (pool->FreeAt(ptr)) return true;
  }
  for (DeviceMemoryPool* pool : PrivatePools()) {
    if (!pool->FreeAt(ptr)) continue;
    ReturnIfRetired(pool);
    return true;
  }
  return false;
}

void CachingDeviceAllocator::Free(Block* block) {
  DeviceMemoryPool* pool = block->pool;
  pool->Free(block);
  if (pool != pools_[pool->device()].get()) ReturnIfRetired(pool);
}

void CachingDeviceAllocator::ReturnIfRetired(DeviceMemoryPool* pool) {
  bool retired = false;
  {
    absl::MutexLock lock(&mutex_);
    retired = retired_.contains(pool);
  }
  // A failure to return memory leaves it cached in the pool, still usable
  // by a later graph on the same pool id: nothing to report to a deleter.
  if (retired) pool->EmptyCache().IgnoreError();
}

absl::StatusOr<Block*> CachingDeviceAllocator::FindBlock(void* ptr) const {
  for (const auto& pool : pools_) {
    if (Block* block = pool->FindAllocated(ptr)) return block;
  }
  for (DeviceMemoryPool* pool : PrivatePools()) {
    if (Block* block = pool->FindAllocated(ptr)) return block;
  }
  return absl::NotFoundError(absl::StrCat(
      "pointer ", absl::Hex(reinterpret_cast<uintptr_t>(ptr)),
      " is not the start of memory allocated by openreg's caching "
      "allocator (a view into another tensor's storage, or freed)"));
}

absl::Status CachingDeviceAllocator::RecordStream(void* ptr,
                                                  openreg_stream stream) {
  absl::StatusOr<Block*> block = FindBlock(ptr);
  if (!block.ok()) return block.status();
  (*block)->pool->RecordStream(*block, stream);
  return absl::OkStatus();
}

absl::StatusOr<int32_t> CachingDeviceAllocator::DeviceOf(void* ptr) const {
  absl::StatusOr<Block*> block = FindBlock(ptr);
  if (!block.ok()) return block.status();
  return (*block)->pool->device();
}

}  // namespace openreg

namespace openreg {

void CachingDeviceAllocator::EnableHistory(
    const HistorySettings& settings, const MemoryHistory::Gatherer& gatherer) {
  for (auto& history : histories_) history->Enable(settings, gatherer);
}

void CachingDeviceAllocator::DisableHistory() {
  for (auto& history : histories_) history->Disable();
}

MemorySnapshot CachingDeviceAllocator::Snapshot() const {
  MemorySnapshot snapshot;
  for (const auto& history : histories_) {
    if (!history->enabled()) continue;
    TraceEntry entry;
    entry.action = TraceAction::kSnapshot;
    entry.time_us = absl::ToUnixMicros(absl::Now());
    history->Record(std::move(entry));
  }
  for (const auto& pool : pools_) pool->Snapshot(snapshot.segments);
  {
    // Private pools are never destroyed, but the map may grow meanwhile.
    absl::MutexLock lock(&mutex_);
    for (const auto& [key, private_pool] : private_pools_) {
      private_pool.pool->Snapshot(snapshot.segments);
    }
  }
  for (const auto& history : histories_) {
    snapshot.device_traces.push_back(history->Trace());
  }
  snapshot.settings = config_;
  return snapshot;
}

}  // namespace openreg
