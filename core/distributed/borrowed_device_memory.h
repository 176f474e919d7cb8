// Note [Collectives borrow stream-ordered memory]
// A collective is enqueued on the current stream and runs there, after
// everything queued before it (docs/distributed.md). Like an eager op's work
// (Note [Stream-ordered reuse], core/runtime/memory/device_memory_pool.h), it
// need not keep alive memory that is stream-ordered on that stream: a free
// only lets later work on the same stream reuse it, and that work runs after
// the collective. So a collective's Gloo call and the division after it see
// its tensors through borrowed tensors (below), which name the memory without
// owning it, and EnqueueBatch decides, when the work is enqueued, which
// storages the work must still own (OrderedOnStream): those of other streams,
// of the registered allocator, and every storage while the stream captures.
// Until then (between startCoalescing and endCoalescing) the collective owns
// every storage.
//
// A borrowed tensor takes its memory's address when the collective is
// called, as a CUDA kernel takes its arguments' addresses at its launch: a
// tensor resized after that call does not move the collective to its new
// memory, and the copy of the old memory, queued after the collective on
// the same stream, carries its result over. Resizing a tensor that a
// collective on another stream still uses is a race, as it is with CUDA.
#ifndef OPENREG_CORE_DISTRIBUTED_BORROWED_DEVICE_MEMORY_H_
#define OPENREG_CORE_DISTRIBUTED_BORROWED_DEVICE_MEMORY_H_

#include <ATen/core/Tensor.h>

#include <vector>

namespace openreg {

// An openreg tensor over `tensor`'s memory, with its dtype, device,
// geometry and conjugate and negative bits, in a storage of its own that
// does not own that memory and cannot be resized. No autograd history.
// Anything else (undefined, sparse, quantized or non-openreg tensors, or
// tensors without a storage) is returned as it is, and owned.
at::Tensor BorrowDeviceMemory(const at::Tensor& tensor);
std::vector<at::Tensor> BorrowDeviceMemory(
    const std::vector<at::Tensor>& tensors);
std::vector<std::vector<at::Tensor>> BorrowDeviceMemory(
    const std::vector<std::vector<at::Tensor>>& lists);

}  // namespace openreg

#endif  // OPENREG_CORE_DISTRIBUTED_BORROWED_DEVICE_MEMORY_H_
