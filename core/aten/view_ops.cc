#include <ATen/EmptyTensor.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>

#include "core/aten/native_ops.h"
#include "core/torch_runtime/device_allocator.h"
#include "core/torch_runtime/storage_resize.h"

namespace openreg {
namespace {

// Grows `storage` when `bytes` (what a tensor geometry needs) exceeds it.
void EnsureStorageBytes(const c10::Storage& storage, size_t bytes) {
  if (bytes > storage.nbytes()) ResizeStorageBytes(storage, bytes);
}

size_t BytesNeeded(at::IntArrayRef size, at::IntArrayRef stride,
                   int64_t storage_offset, size_t item_size) {
  const size_t span = at::detail::computeStorageNbytes(size, stride, item_size);
  return span == 0 ? 0 : span + storage_offset * item_size;
}

}  // namespace

// The view kernels are device-agnostic in ATen: they only build a TensorImpl
// over the same storage.
at::Tensor AsStrided(const at::Tensor& self, at::IntArrayRef size,
                     at::IntArrayRef stride,
                     std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

at::Tensor View(const at::Tensor& self, at::IntArrayRef size) {
  return at::native::view(self, size);
}

at::Tensor ReshapeAlias(const at::Tensor& self, at::IntArrayRef size,
                        at::IntArrayRef stride) {
  return at::native::_reshape_alias(self, size, stride);
}

const at::Tensor& Resize(const at::Tensor& self, at::IntArrayRef size,
                         std::optional<at::MemoryFormat> memory_format) {
  const c10::DeviceGuard guard(self.device());
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  if (memory_format.has_value() &&
      *memory_format != at::MemoryFormat::Preserve) {
    impl->empty_tensor_restride(*memory_format);
  }
  EnsureStorageBytes(self.storage(),
                     BytesNeeded(self.sizes(), self.strides(),
                                 self.storage_offset(), self.itemsize()));
  return self;
}

at::Tensor& SetEmpty(at::Tensor& self) {
  const c10::DeviceGuard guard(self.device());
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0,
                       &GetStorageAllocator(), /*resizable=*/true);
  return SetStorageWithGeometry(self, std::move(storage), 0, {0}, {});
}

at::Tensor& SetStorage(at::Tensor& self, at::Storage source) {
  const int64_t numel = static_cast<int64_t>(source.nbytes() / self.itemsize());
  return SetStorageWithGeometry(self, std::move(source), 0, {numel}, {});
}

at::Tensor& SetStorageWithGeometry(at::Tensor& self, at::Storage source,
                                   int64_t storage_offset,
                                   at::IntArrayRef size,
                                   at::IntArrayRef stride) {
  TORCH_CHECK(source.device().type() == c10::DeviceType::PrivateUse1,
              "set_: expected an openreg storage for an openreg tensor, got a "
              "storage on ", source.device());
  TORCH_CHECK(storage_offset >= 0, "set_: storage_offset must be >= 0, got ",
              storage_offset);
  const c10::DeviceGuard guard(source.device());
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(std::move(source));
  impl->set_storage_offset(storage_offset);
  if (stride.empty()) {
    impl->set_sizes_contiguous(size);
  } else {
    TORCH_CHECK(size.size() == stride.size(), "set_: got ", size.size(),
                " sizes but ", stride.size(), " strides; they must match.");
    impl->set_sizes_and_strides(size, stride);
  }
  EnsureStorageBytes(self.storage(),
                     BytesNeeded(self.sizes(), self.strides(), storage_offset,
                                 self.itemsize()));
  return self;
}

at::Tensor& SetTensor(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) return self;
  return SetStorageWithGeometry(self, source.storage(), source.storage_offset(),
                                source.sizes(), source.strides());
}

}  // namespace openreg
