#include "core/aten/kernel_results.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ops/contiguous.h>
#include <c10/core/DeviceGuard.h>

#include <utility>

#include "core/aten/kernel_memory.h"
#include "core/runtime/runtime.h"
#include "core/torch_runtime/device_allocator.h"
#include "core/torch_runtime/openreg_device.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_capture.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {
namespace {

// Copies a CPU result into new memory on `device`: for results a kernel
// allocated outside the routing of kernel_memory.h (e.g. on a worker thread).
at::Tensor NewDeviceTensorFrom(const at::Tensor& cpu, c10::DeviceIndex device) {
  const at::Tensor source =
      cpu.is_non_overlapping_and_dense() ? cpu : cpu.contiguous();
  at::Tensor result =
      EmptyOnDevice(TensorSpec{source.scalar_type(), source.sizes().vec(),
                               source.strides().vec()},
                    device);
  const size_t bytes = static_cast<size_t>(source.numel()) * source.itemsize();
  if (bytes > 0) {
    // Pageable source: the driver copies it before returning.
    EnqueueCopy(device, CurrentDriverStream(device), result.data_ptr(),
                source.data_ptr(), bytes, CopyKind::kHostToDevice);
  }
  return result;
}

// An openreg tensor over `storage` with `like`'s dtype and geometry.
at::Tensor OverStorage(const c10::Storage& storage, const at::Tensor& like) {
  // Not TensorImpl::VIEW, which takes the key set as given: without the
  // autograd keys the tensor would be an inference tensor.
  at::Tensor tensor = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(storage), kOpenRegKeys, like.dtype());
  tensor.unsafeGetTensorImpl()->set_sizes_and_strides(
      like.sizes(), like.strides(), like.storage_offset());
  return tensor;
}

}  // namespace

at::Tensor EmptyOnDevice(const TensorSpec& spec, c10::DeviceIndex device) {
  const c10::DeviceGuard guard(OpenRegDevice(device));
  return at::detail::empty_strided_generic(spec.sizes, spec.strides,
                                           &GetStorageAllocator(), kOpenRegKeys,
                                           spec.dtype);
}

std::optional<at::Tensor> KernelResults::Adopt(const at::Tensor& result) {
  const c10::StorageImpl* key = result.storage().unsafeGetStorageImpl();
  auto it = adopted_.find(key);
  if (it == adopted_.end()) {
    c10::Storage cpu_storage = result.storage();
    c10::Storage adopted;
    if (!AdoptKernelStorage(cpu_storage, device_, &adopted)) {
      return std::nullopt;
    }
    it = adopted_.emplace(key, std::move(adopted)).first;
  }
  return OverStorage(it->second, result);
}

at::Tensor KernelResults::FromCpu(const at::Tensor& result) {
  if (!result.defined() || !result.device().is_cpu()) return result;
  if (const at::Tensor* original = aliases_.OriginalOf(result)) {
    return *original;
  }
  if (const c10::Storage* storage = aliases_.OriginalStorageOf(result);
      storage != nullptr &&
      result.storage().data() == aliases_.ExecutionAddress(*storage)) {
    // A view of an argument: the same geometry over the openreg storage.
    return OverStorage(*storage, result);
  }
  if (std::optional<at::Tensor> adopted = Adopt(result)) return *adopted;
  return NewDeviceTensorFrom(result, device_);
}

void KernelResults::SyncWritten(const at::Tensor& original,
                                const at::Tensor& alias) {
  if (alias.storage().data() != aliases_.ExecutionAddress(original.storage())) {
    std::optional<at::Tensor> adopted = Adopt(alias);
    const at::Tensor moved =
        adopted.has_value() ? *adopted : NewDeviceTensorFrom(alias, device_);
    original.unsafeGetTensorImpl()->set_storage_keep_dtype(moved.storage());
    original.unsafeGetTensorImpl()->set_sizes_and_strides(
        moved.sizes(), moved.strides(), moved.storage_offset());
  } else if (alias.sizes() != original.sizes() ||
             alias.strides() != original.strides() ||
             alias.storage_offset() != original.storage_offset()) {
    original.unsafeGetTensorImpl()->set_sizes_and_strides(
        alias.sizes(), alias.strides(), alias.storage_offset());
  }
  // Kernels may flip these bits instead of conjugating or negating the values
  // (linalg_lu_solve with left=False): they say how the memory is read.
  original._set_conj(alias.is_conj());
  original._set_neg(alias.is_neg());
}

}  // namespace openreg
