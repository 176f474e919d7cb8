// Tensor.record_stream(stream): the tensor's memory must not be reused until
// the work queued on `stream` so far has run. Work openreg enqueues already
// owns the memory it touches (Note [Asynchronous execution]); this covers
// uses the core cannot see, by enqueuing on `stream` a no-op that owns the
// storage.
#include <c10/core/Stream.h>

#include "core/aten/native_ops.h"
#include "core/runtime/stream_work.h"
#include "core/runtime/torch_stream.h"

namespace openreg {

void RecordStream(at::Tensor& self, c10::Stream stream) {
  TORCH_CHECK(stream.device() == self.device(),
              "record_stream: expected a stream on ", self.device(),
              " (the tensor's device), got a stream on ", stream.device(), ".");
  EnqueueWork(stream.device_index(), DriverStream(stream), "record_stream",
              [storage = self.storage()] {});
}

}  // namespace openreg
