#include "core/torch_runtime/storage_resize.h"

#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include <algorithm>

#include "core/runtime/runtime.h"
#include "core/torch_runtime/device_allocator.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_capture.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {

void ResizeStorageBytes(const c10::Storage& storage, size_t new_size) {
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  TORCH_CHECK(impl->resizable(),
              "Trying to resize an openreg storage that is not resizable "
              "(it wraps memory openreg does not own).");
  const c10::Device device = impl->device();
  c10::DeviceGuard guard(device);
  c10::DataPtr new_data = GetStorageAllocator().allocate(new_size);
  const size_t copy_size = std::min(new_size, impl->nbytes());
  if (copy_size > 0) {
    EnqueueCopy(device.index(), CurrentDriverStream(device.index()),
                new_data.get(), impl->data(), copy_size,
                CopyKind::kDeviceToDevice);
  }
  c10::DataPtr old_data = impl->set_data_ptr(std::move(new_data));
  impl->set_nbytes(new_size);
  // The copy above reads the old memory when it runs: free it only after.
  EnqueueOnCurrentStream(device.index(), "resize_",
                         [old_data = std::move(old_data)] {});
}

}  // namespace openreg
