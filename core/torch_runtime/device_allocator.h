// PyTorch's device allocator for openreg: every openreg storage's memory,
// served by the caching allocator (Note [Device caching allocator]) and the
// source of torch.accelerator's and torch.openreg's memory statistics.
//
// Note [Two device allocator instances]
// A DataPtr has room for one context pointer, handed to its deleter. Two
// users want different things in it:
//   - openreg's own storages (factories, kernel results, resizes) carry the
//     caching allocator's block, so that a free needs no lookup and
//     OrderedOnStream, asked for every storage of every op, reads the
//     block's stream with one load;
//   - c10::Allocator::raw_allocate, the one path C++ libraries have to raw
//     device memory (c10::GetAllocator(PrivateUse1)->raw_allocate, as CUDA
//     code does with the CUDA allocator), asserts that the context is the
//     address, and keeps only that address.
// So there are two instances of DeviceAllocator, which differ in nothing
// else: the one registered with PyTorch gives the address as context (its
// frees look the block up by address, as CUDA's allocator does for every
// free), and the one openreg's storages are made with gives the block. Both
// serve from the same caching allocator, with the same statistics.
// Memory behind an address context is not stream-ordered as far as
// OrderedOnStream knows: work using a storage of it owns a reference, as for
// any memory whose block it cannot see.
//
// Thread-safety: all methods may be called from any thread; the caching
// allocator does its own locking.
#ifndef OPENREG_CORE_TORCH_RUNTIME_DEVICE_ALLOCATOR_H_
#define OPENREG_CORE_TORCH_RUNTIME_DEVICE_ALLOCATOR_H_

#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Storage.h>

#include <utility>

#include "driver_abi/openreg_driver.h"

namespace openreg {

// What a DeviceAllocator's DataPtrs carry as context (Note [Two device
// allocator instances]).
enum class DataPtrContext {
  // The caching allocator's block.
  kBlock,
  // The address, as c10::Allocator::raw_allocate requires.
  kAddress,
};

class DeviceAllocator final : public c10::DeviceAllocator {
 public:
  explicit DeviceAllocator(DataPtrContext context) : context_(context) {}

  // Memory on the calling thread's current device.
  c10::DataPtr allocate(size_t size) override;
  c10::DeleterFnPtr raw_deleter() const override;
  // A DataPtr is a plain pointer unless its context is a block.
  bool is_simple_data_ptr(const c10::DataPtr& data_ptr) const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  // Whether the runtime exists; statistics of a runtime that does not are
  // zero, and asking for them does not create it.
  bool initialized() override;
  // Returns the unused cached memory of every device to the driver.
  void emptyCache(c10::MempoolId_t mempool_id = {0, 0}) override;
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override;
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(
      c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;
  // (free, total) bytes of the device, as the driver reports them.
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override;

 private:
  const DataPtrContext context_;
};

// The instance registered with PyTorch (c10::GetAllocator(PrivateUse1)), for
// code outside openreg: its DataPtrs carry the address, so raw_allocate
// works.
DeviceAllocator& GetDeviceAllocator();

// The instance openreg's own storages are made with: its DataPtrs carry the
// block.
DeviceAllocator& GetStorageAllocator();

// `size` bytes of device memory on `device`, freed by the DataPtr. Throws
// torch.OutOfMemoryError with an actionable message when the device is
// full even after releasing the cache and waiting for queued work.
// Allocated from the host, outside capture, the memory is stream-ordered on
// the current stream (Note [Stream-ordered reuse]); the DataPtr's context is
// then the allocator's block, not the address. Zero bytes take no memory:
// a null pointer and no block.
c10::DataPtr AllocateDeviceMemory(c10::DeviceIndex device, size_t size);

// Frees device memory by its address; never throws (a deleter). For memory
// whose DataPtr was taken apart (the raw deleter, kernel allocations).
void FreeDeviceMemory(void* ptr);

// The stream on which work enqueued now on `stream` need not own
// stream-ordered memory (OrderedOnStream): `stream` itself, or null while it
// captures, since a graph's work runs at replays, after any free, so it owns
// everything it uses.
openreg_stream StreamOrderingWork(openreg_stream stream);

// Whether `storage`'s memory is stream-ordered on `stream` (not null): work
// enqueued on `stream` needs no reference to it, because a free only lets
// later work on `stream` reuse it. Work on any other stream must own it.
bool OrderedOnStream(const c10::Storage& storage, openreg_stream stream);

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_DEVICE_ALLOCATOR_H_
