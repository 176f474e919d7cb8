#include "core/torch_runtime/device_allocator.h"

#include <c10/util/Exception.h>

#include "core/runtime/memory/block.h"
#include "core/runtime/runtime.h"
#include "core/runtime/thread_state.h"
#include "core/torch_runtime/memory_stats_to_torch.h"
#include "core/torch_runtime/openreg_device.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_capture.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {
namespace {

// Frees a DataPtr of AllocateDeviceMemory, whose context is its block.
void FreeDeviceBlock(void* context) {
  if (context == nullptr) return;
  // Not started: a forked child, where the parent's memory is not ours.
  Runtime* runtime = Runtime::IfStarted();
  if (runtime == nullptr) return;
  runtime->device_memory().Free(static_cast<Block*>(context));
}

// The runtime if it exists and `device` is valid; nullptr if it does not
// exist yet; throws for an invalid device.
Runtime* ExistingRuntime(c10::DeviceIndex device) {
  if (!Runtime::IsInitialized()) return nullptr;
  return &RuntimeForDevice(device);
}

}  // namespace

void FreeDeviceMemory(void* ptr) {
  if (ptr == nullptr) return;
  // Not started: a forked child, where the parent's memory is not ours.
  Runtime* runtime = Runtime::IfStarted();
  if (runtime == nullptr) return;
  if (!runtime->device_memory().FreeAt(ptr)) {
    // A deleter must not throw; an unknown pointer here is a core bug.
    TORCH_WARN("openreg: freeing memory the caching allocator does not know: ",
               ptr);
  }
}

c10::DataPtr DeviceAllocator::allocate(size_t size) {
  c10::DataPtr data = AllocateDeviceMemory(
      static_cast<c10::DeviceIndex>(CurrentDeviceIndex()), size);
  if (context_ == DataPtrContext::kBlock) return data;
  // The block stays allocated: from here on the address frees it.
  void* address = data.get();
  const c10::Device device = data.device();
  data.release_context();
  return c10::DataPtr(address, address, &FreeDeviceMemory, device);
}

c10::DataPtr AllocateDeviceMemory(c10::DeviceIndex device, size_t size) {
  Runtime& runtime = RuntimeForDevice(device);
  runtime.MarkDeviceUsed(device);
  // No memory for no bytes, as CUDA's caching allocator and PyTorch's CPU
  // allocator do: an empty tensor holds a null pointer and no block, and the
  // many empty tensors kernels make (oneDNN's convolution makes five a call)
  // cost the pool nothing.
  if (size == 0) {
    return c10::DataPtr(nullptr, nullptr, &FreeDeviceBlock,
                        OpenRegDevice(device));
  }
  auto reclaim = [&] {
    // Queued work owns memory until it has run; on a user thread, let it
    // finish. Inside work that would wait for itself.
    if (!InsideEnqueuedWork()) WaitForEnqueuedWork(device);
  };
  // During capture the graph's private pool serves the capturing stream.
  const std::optional<PrivatePoolId> pool = CapturePoolOf(device);
  // Inside work, the allocation happens where the stream's execution is,
  // behind the host: it takes settled memory and what its stream freed
  // before the work (Note [Stream-ordered reuse], Note [Reuse inside work]).
  const bool inside_work = InsideEnqueuedWork();
  const openreg_stream stream =
      inside_work ? nullptr : CurrentDriverStream(device);
  const StreamPoint point =
      inside_work ? RunningWorkPoint(device) : StreamPoint();
  Block* block = ValueOrThrow(
      pool.has_value()
          ? runtime.device_memory().AllocateFromPrivatePool(device, *pool, size,
                                                            reclaim)
          : runtime.device_memory().Allocate(device, size, reclaim, stream,
                                             point));
  return c10::DataPtr(block->ptr, block, &FreeDeviceBlock,
                      OpenRegDevice(device));
}

openreg_stream StreamOrderingWork(openreg_stream stream) {
  return IsCapturing(stream) ? nullptr : stream;
}

bool OrderedOnStream(const c10::Storage& storage, openreg_stream stream) {
  const c10::DataPtr& data = storage.data_ptr();
  // The block is allocated for as long as the storage holds it, and its
  // stream is set before the DataPtr exists and unchanged until the free.
  // An empty storage has no block, and nothing to order.
  return stream != nullptr && data.get_deleter() == &FreeDeviceBlock &&
         data.get_context() != nullptr &&
         static_cast<const Block*>(data.get_context())->stream == stream;
}

c10::DeleterFnPtr DeviceAllocator::raw_deleter() const {
  return &FreeDeviceMemory;
}

bool DeviceAllocator::is_simple_data_ptr(const c10::DataPtr& data_ptr) const {
  return data_ptr.get_deleter() != &FreeDeviceBlock &&
         data_ptr.get() == data_ptr.get_context();
}

void DeviceAllocator::copy_data(void* dest, const void* src,
                                std::size_t count) const {
  const int32_t device = CurrentDeviceIndex();
  const openreg_stream stream = CurrentDriverStream(device);
  EnqueueCopy(device, stream, dest, src, count, CopyKind::kDeviceToDevice);
  SynchronizeStream(device, stream);
}

bool DeviceAllocator::initialized() { return Runtime::IsInitialized(); }

void DeviceAllocator::emptyCache(c10::MempoolId_t /*mempool_id*/) {
  if (!Runtime::IsInitialized()) return;
  CachingDeviceAllocator& memory = RuntimeOrThrow().device_memory();
  for (int32_t device = 0; device < memory.device_count(); ++device) {
    ThrowIfError(memory.pool(device).EmptyCache());
  }
}

void DeviceAllocator::recordStream(const c10::DataPtr& ptr,
                                   c10::Stream stream) {
  if (ptr.get() == nullptr) return;
  ThrowIfError(RuntimeForDevice(stream.device_index())
                   .device_memory()
                   .RecordStream(ptr.get(), DriverStreamOf(stream)));
}

c10::CachingDeviceAllocator::DeviceStats DeviceAllocator::getDeviceStats(
    c10::DeviceIndex device) {
  c10::CachingDeviceAllocator::DeviceStats result;
  Runtime* runtime = ExistingRuntime(device);
  if (runtime == nullptr) return result;
  const DeviceMemoryStats stats = runtime->device_memory().pool(device).stats();
  CopyPoolStats(stats.allocation, result.allocation);
  CopyPoolStats(stats.segment, result.segment);
  CopyPoolStats(stats.active, result.active);
  CopyPoolStats(stats.inactive_split, result.inactive_split);
  CopyPoolStats(stats.allocated_bytes, result.allocated_bytes);
  CopyPoolStats(stats.reserved_bytes, result.reserved_bytes);
  CopyPoolStats(stats.active_bytes, result.active_bytes);
  CopyPoolStats(stats.inactive_split_bytes, result.inactive_split_bytes);
  CopyPoolStats(stats.requested_bytes, result.requested_bytes);
  CopyStat(stats.oversize_allocations, result.oversize_allocations);
  CopyStat(stats.oversize_segments, result.oversize_segments);
  result.num_alloc_retries = stats.num_alloc_retries;
  result.num_ooms = stats.num_ooms;
  result.num_sync_all_streams = stats.num_sync_all_streams;
  result.num_device_alloc = stats.num_device_alloc;
  result.num_device_free = stats.num_device_free;
  result.max_split_size = stats.max_split_size;
  return result;
}

void DeviceAllocator::resetAccumulatedStats(c10::DeviceIndex device) {
  if (Runtime* runtime = ExistingRuntime(device)) {
    runtime->device_memory().pool(device).ResetAccumulatedStats();
  }
}

void DeviceAllocator::resetPeakStats(c10::DeviceIndex device) {
  if (Runtime* runtime = ExistingRuntime(device)) {
    runtime->device_memory().pool(device).ResetPeakStats();
  }
}

std::pair<size_t, size_t> DeviceAllocator::getMemoryInfo(
    c10::DeviceIndex device) {
  const MemoryInfo info =
      ValueOrThrow(RuntimeForDevice(device).driver().MemGetInfo(device));
  return {info.free_bytes, info.total_bytes};
}

// Never destroyed: storages may outlive static destruction.
DeviceAllocator& GetDeviceAllocator() {
  static DeviceAllocator* allocator =
      new DeviceAllocator(DataPtrContext::kAddress);
  return *allocator;
}

DeviceAllocator& GetStorageAllocator() {
  static DeviceAllocator* allocator =
      new DeviceAllocator(DataPtrContext::kBlock);
  return *allocator;
}

}  // namespace openreg
