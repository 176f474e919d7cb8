// Note [Device memory by address]
//
// torch.openreg.caching_allocator_alloc and caching_allocator_delete, as
// torch.cuda's: device memory from the caching allocator, handed out as an
// address for code that manages it by hand. The memory comes through
// c10::Allocator::raw_allocate of the allocator registered for the device,
// the path C++ libraries take (Note [Two device allocator instances]), on
// the given stream: it is stream-ordered there, like a tensor made while
// that stream is current (Note [Stream-ordered reuse]).
//
// Unlike CUDA's, the delete frees only what the alloc handed out and has not
// freed yet. Any other address is an error, and it frees nothing: an address
// inside a tensor's memory would otherwise free that memory under the
// tensor, and work reusing it would silently compute on the tensor's data.
//
// Thread-safety: both functions may be called from any thread; a mutex
// guards the set of live addresses.
#ifndef OPENREG_CORE_TORCH_RUNTIME_DEVICE_MEMORY_BY_ADDRESS_H_
#define OPENREG_CORE_TORCH_RUNTIME_DEVICE_MEMORY_BY_ADDRESS_H_

#include <c10/core/Stream.h>

#include <cstdint>

namespace openreg {

// `size` bytes of `stream`'s device (an openreg stream), stream-ordered on
// `stream`. Throws c10::Error for a negative size, and
// torch.OutOfMemoryError when the device is full.
uintptr_t AllocateDeviceMemoryByAddress(int64_t size, c10::Stream stream);

// Frees memory AllocateDeviceMemoryByAddress returned. Throws c10::Error for
// any other address, and for one freed already, freeing nothing.
void FreeDeviceMemoryByAddress(uintptr_t address);

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_DEVICE_MEMORY_BY_ADDRESS_H_
