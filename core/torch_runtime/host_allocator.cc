#include "core/torch_runtime/host_allocator.h"

#include <c10/util/Exception.h>

#include <cstring>

#include "core/runtime/runtime.h"
#include "core/torch_runtime/memory_stats_to_torch.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {
namespace {

void FreeHostMemory(void* ptr) {
  if (ptr == nullptr) return;
  absl::StatusOr<Runtime*> runtime = Runtime::Get();
  if (!runtime.ok()) return;
  if (!(*runtime)->pinned_memory().Free(ptr)) {
    TORCH_WARN("openreg: freeing pinned memory the allocator does not know: ",
               ptr);
  }
}

}  // namespace

c10::DataPtr HostAllocator::allocate(size_t size) {
  void* data = ValueOrThrow(RuntimeOrThrow().pinned_memory().Allocate(size));
  return c10::DataPtr(data, data, &FreeHostMemory,
                      c10::Device(c10::DeviceType::CPU));
}

c10::DeleterFnPtr HostAllocator::raw_deleter() const { return &FreeHostMemory; }

void HostAllocator::copy_data(void* dest, const void* src,
                              std::size_t count) const {
  std::memcpy(dest, src, count);
}

bool HostAllocator::record_event(void* /*ptr*/, void* ctx, c10::Stream stream) {
  return RuntimeForDevice(stream.device_index())
      .pinned_memory()
      .RecordEvent(ctx, stream.device_index(), DriverStreamOf(stream));
}

void HostAllocator::empty_cache() {
  if (!Runtime::IsInitialized()) return;
  ThrowIfError(RuntimeOrThrow().pinned_memory().EmptyCache());
}

at::HostStats HostAllocator::get_stats() {
  at::HostStats result;
  if (!Runtime::IsInitialized()) return result;
  const HostMemoryStats stats = RuntimeOrThrow().pinned_memory().stats();
  CopyStat(stats.active_requests, result.active_requests);
  CopyStat(stats.active_bytes, result.active_bytes);
  CopyStat(stats.allocations, result.allocations);
  CopyStat(stats.allocated_bytes, result.allocated_bytes);
  result.num_host_alloc = stats.num_host_alloc;
  result.num_host_free = stats.num_host_free;
  return result;
}

void HostAllocator::reset_accumulated_stats() {
  if (Runtime::IsInitialized()) {
    RuntimeOrThrow().pinned_memory().ResetAccumulatedStats();
  }
}

void HostAllocator::reset_peak_stats() {
  if (Runtime::IsInitialized()) RuntimeOrThrow().pinned_memory().ResetPeakStats();
}

HostAllocator& GetHostAllocator() {
  static HostAllocator* allocator = new HostAllocator();  // never destroyed
  return *allocator;
}

bool IsPinnedHostPointer(const void* ptr) {
  // Asking never initializes the driver: nothing is pinned before it exists.
  if (!Runtime::IsInitialized()) return false;
  absl::StatusOr<PointerAttributes> attributes =
      RuntimeOrThrow().driver().GetPointerAttributes(ptr);
  return attributes.ok() && attributes->memory_type == OPENREG_MEMORY_TYPE_HOST;
}

}  // namespace openreg
