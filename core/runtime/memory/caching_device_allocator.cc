#include "core/runtime/memory/caching_device_allocator.h"

#include "absl/strings/str_cat.h"

namespace openreg {

CachingDeviceAllocator::CachingDeviceAllocator(const Driver& driver,
                                               int32_t device_count,
                                               const AllocatorConfig& config) {
  pools_.reserve(device_count);
  for (int32_t device = 0; device < device_count; ++device) {
    pools_.push_back(std::make_unique<DeviceMemoryPool>(driver, device, config));
  }
}

absl::StatusOr<void*> CachingDeviceAllocator::Allocate(
    int32_t device, size_t size, absl::FunctionRef<void()> reclaim) {
  absl::StatusOr<Block*> block = pools_[device]->Allocate(size, reclaim);
  if (!block.ok()) return block.status();
  absl::MutexLock lock(&mutex_);
  allocated_.emplace((*block)->ptr, *block);
  return (*block)->ptr;
}

bool CachingDeviceAllocator::Free(void* ptr) {
  Block* block = nullptr;
  {
    absl::MutexLock lock(&mutex_);
    auto it = allocated_.find(ptr);
    if (it == allocated_.end()) return false;
    block = it->second;
    allocated_.erase(it);
  }
  block->pool->Free(block);
  return true;
}

absl::StatusOr<Block*> CachingDeviceAllocator::FindBlock(void* ptr) const {
  absl::MutexLock lock(&mutex_);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) {
    return absl::NotFoundError(absl::StrCat(
        "pointer ", absl::Hex(reinterpret_cast<uintptr_t>(ptr)),
        " is not the start of memory allocated by openreg's caching "
        "allocator (a view into another tensor's storage, or freed)"));
  }
  return it->second;
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
