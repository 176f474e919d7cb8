// Tensor.record_stream(stream): the tensor's memory must not be reused until
// the work queued on `stream` by the time it is freed has run. Work openreg
// enqueues already owns the memory it touches (Note [Asynchronous
// execution]); this covers uses the core cannot see, through the caching
// allocator, which records an event on `stream` when the memory is freed.
#include <c10/core/Stream.h>

#include "core/aten/native_ops.h"
#include "core/torch_runtime/device_allocator.h"

namespace openreg {

void RecordStream(at::Tensor& self, c10::Stream stream) {
  TORCH_CHECK(stream.device() == self.device(),
              "record_stream: expected a stream on ", self.device(),
              " (the tensor's device), got a stream on ", stream.device(), ".");
  GetStorageAllocator().recordStream(self.storage().data_ptr(), stream);
}

}  // namespace openreg
