#include "core/aten/layout_tensors.h"

#include <ATen/NestedTensorImpl.h>
#include <ATen/SparseCsrTensorImpl.h>
#include <ATen/SparseTensorImpl.h>
#include <ATen/quantized/QTensorImpl.h>
#include <ATen/quantized/Quantizer.h>
#include <c10/core/DeviceGuard.h>

#include "core/torch_runtime/openreg_device.h"

namespace openreg {
namespace {

// The impls, reached without the dispatcher: asking an openreg tensor for
// its parts through ATen would come back to the fallback.
at::SparseTensorImpl* CooImpl(const at::Tensor& tensor) {
  return static_cast<at::SparseTensorImpl*>(tensor.unsafeGetTensorImpl());
}

at::SparseCsrTensorImpl* CompressedImpl(const at::Tensor& tensor) {
  return static_cast<at::SparseCsrTensorImpl*>(tensor.unsafeGetTensorImpl());
}

bool IsCompressed(at::Layout layout) {
  return layout == at::kSparseCsr || layout == at::kSparseCsc ||
         layout == at::kSparseBsr || layout == at::kSparseBsc;
}

// A COO tensor with `key` (SparseCPU or SparsePrivateUse1) of `like`'s
// dtype, sizes and sparse/dense split, holding `indices` and `values`.
at::Tensor CooTensor(c10::DispatchKey key, const at::Tensor& like,
                     const at::Tensor& indices, const at::Tensor& values) {
  const at::SparseTensorImpl* like_impl = CooImpl(like);
  at::Tensor tensor = at::detail::make_tensor<at::SparseTensorImpl>(
      c10::DispatchKeySet(key), like.dtype());
  at::SparseTensorImpl* impl = CooImpl(tensor);
  impl->raw_resize_(like_impl->sparse_dim(), like_impl->dense_dim(),
                    like.sizes());
  impl->set_indices_and_values_unsafe(indices, values);
  impl->set_coalesced(like_impl->coalesced());
  return tensor;
}

// A compressed tensor with `key` (SparseCsrCPU or SparseCsrPrivateUse1) on
// `device` of `like`'s layout, dtype and sizes, holding the parts given.
// Made directly, never through _sparse_compressed_tensor_unsafe: with
// sparse invariant checks on, that reads the indices on the calling thread,
// before the stream has written them.
at::Tensor CompressedTensor(c10::DispatchKey key, c10::Device device,
                            const at::Tensor& like,
                            const at::Tensor& compressed_indices,
                            const at::Tensor& plain_indices,
                            const at::Tensor& values) {
  at::Tensor tensor = at::detail::make_tensor<at::SparseCsrTensorImpl>(
      c10::DispatchKeySet(key), device, like.layout(), like.dtype());
  CompressedImpl(tensor)->set_member_tensors(compressed_indices, plain_indices,
                                             values, like.sizes());
  return tensor;
}

at::native::NestedTensorImpl* NestedImpl(const at::Tensor& tensor) {
  return static_cast<at::native::NestedTensorImpl*>(
      tensor.unsafeGetTensorImpl());
}

// All of the nested tensor `tensor`'s storage as a 1-D tensor of its dtype,
// on its device: the components' memory, at the storage offsets its metadata
// gives.
at::Tensor NestedStorage(const at::Tensor& tensor) {
  return NestedImpl(tensor)->get_unsafe_storage_as_tensor();
}

// A nested tensor over all of `storage`'s memory (NestedStorage's shape) with
// the metadata given. Its dispatch keys follow the storage's device:
// NestedTensorCPU or NestedTensorPrivateUse1.
at::Tensor NestedTensor(const at::Tensor& storage,
                        const std::array<at::Tensor, 3>& metadata) {
  return at::detail::make_tensor<at::native::NestedTensorImpl>(
      storage, metadata[0], metadata[1], metadata[2]);
}

// A quantized tensor with `key` over `storage`, with `like`'s dtype,
// geometry and quantizer.
at::Tensor QuantizedTensor(c10::DispatchKey key, const c10::Storage& storage,
                           const at::Tensor& like) {
  at::Tensor tensor = at::detail::make_tensor<at::QTensorImpl>(
      c10::Storage(storage), c10::DispatchKeySet(key), like.dtype(),
      at::get_qtensorimpl(like)->quantizer());
  tensor.unsafeGetTensorImpl()->set_sizes_and_strides(
      like.sizes(), like.strides(), like.storage_offset());
  return tensor;
}

}  // namespace

bool HasLayoutParts(const at::Tensor& tensor) {
  return tensor.defined() && (tensor.layout() != at::kStrided ||
                              tensor.is_quantized() || tensor.is_nested());
}

std::array<at::Tensor, 3> NestedMetadata(const at::Tensor& tensor) {
  const at::native::NestedTensorImpl* impl = NestedImpl(tensor);
  return {impl->get_nested_sizes(), impl->get_nested_strides(),
          impl->get_storage_offsets()};
}

at::Tensor WithNestedMetadataOnHost(const at::Tensor& cpu) {
  std::array<at::Tensor, 3> metadata = NestedMetadata(cpu);
  for (at::Tensor& part : metadata) part = part.clone();
  return NestedTensor(NestedStorage(cpu), metadata);
}

at::Tensor CpuCounterpart(const at::Tensor& tensor, CpuAliases& aliases) {
  const at::Layout layout = tensor.layout();
  if (layout == at::kSparse) {
    const at::SparseTensorImpl* impl = CooImpl(tensor);
    return CooTensor(c10::DispatchKey::SparseCPU, tensor,
                     aliases.Alias(impl->indices()),
                     aliases.Alias(impl->values()));
  }
  if (IsCompressed(layout)) {
    const at::SparseCsrTensorImpl* impl = CompressedImpl(tensor);
    return CompressedTensor(c10::DispatchKey::SparseCsrCPU,
                            c10::Device(c10::DeviceType::CPU), tensor,
                            aliases.Alias(impl->compressed_indices()),
                            aliases.Alias(impl->plain_indices()),
                            aliases.Alias(impl->values()));
  }
  if (tensor.is_nested()) {
    return NestedTensor(aliases.Alias(NestedStorage(tensor)),
                        NestedMetadata(tensor));
  }
  TORCH_CHECK(tensor.is_quantized() && layout == at::kStrided,
              "openreg supports sparse COO, CSR, CSC, BSR and BSC tensors, "
              "strided quantized tensors and strided nested tensors; got a "
              "tensor of layout ",
              layout, ". Convert it to one of those on the CPU first.");
  return QuantizedTensor(c10::DispatchKey::QuantizedCPU,
                         aliases.Alias(tensor).storage(), tensor);
}

void KeepQuantizerOnHost(const at::Tensor& cpu) {
  at::QTensorImpl* impl = at::get_qtensorimpl(cpu);
  const at::QuantizerPtr quantizer = impl->quantizer();
  // Per-tensor parameters are plain numbers, and an empty quantized tensor's
  // quantizer has none: only per-channel quantizers hold tensors. Not
  // qscheme(), which an empty tensor's UnknownQuantizer refuses.
  if (const auto* float_params =
          dynamic_cast<const at::PerChannelAffineFloatQParamsQuantizer*>(
              quantizer.get())) {
    impl->set_quantizer_(
        c10::make_intrusive<at::PerChannelAffineFloatQParamsQuantizer>(
            quantizer->scalar_type(), float_params->scales().clone(),
            float_params->zero_points().clone(), float_params->axis()));
  } else if (const auto* per_channel =
                 dynamic_cast<const at::PerChannelAffineQuantizer*>(
                     quantizer.get())) {
    impl->set_quantizer_(at::make_per_channel_affine_quantizer(
        per_channel->scales().clone(), per_channel->zero_points().clone(),
        per_channel->axis(), quantizer->scalar_type()));
  }
}

at::Tensor OpenRegCounterpart(const at::Tensor& cpu, KernelResults& results,
                              c10::DeviceIndex device) {
  const c10::DeviceGuard guard(OpenRegDevice(device));
  const at::Layout layout = cpu.layout();
  if (layout == at::kSparse) {
    const at::SparseTensorImpl* impl = CooImpl(cpu);
    return CooTensor(c10::DispatchKey::SparsePrivateUse1, cpu,
                     results.FromCpu(impl->indices()),
                     results.FromCpu(impl->values()));
  }
  if (IsCompressed(layout)) {
    const at::SparseCsrTensorImpl* impl = CompressedImpl(cpu);
    return CompressedTensor(c10::DispatchKey::SparseCsrPrivateUse1,
                            OpenRegDevice(device), cpu,
                            results.FromCpu(impl->compressed_indices()),
                            results.FromCpu(impl->plain_indices()),
                            results.FromCpu(impl->values()));
  }
  if (cpu.is_nested()) {
    return NestedTensor(results.FromCpu(NestedStorage(cpu)),
                        NestedMetadata(cpu));
  }
  TORCH_CHECK(cpu.is_quantized() && layout == at::kStrided,
              "openreg cannot hold a result of layout ", layout,
              "; it supports sparse COO, CSR, CSC, BSR and BSC tensors, "
              "strided quantized tensors and strided nested tensors. Run this "
              "op on the CPU.");
  return QuantizedTensor(c10::DispatchKey::QuantizedPrivateUse1,
                         results.FromCpu(cpu).storage(), cpu);
}

void SyncWrittenCounterpart(const at::Tensor& original, const at::Tensor& cpu,
                            CpuAliases& aliases, KernelResults& results) {
  const at::Layout layout = original.layout();
  if (layout == at::kSparse) {
    at::SparseTensorImpl* impl = CooImpl(original);
    // Parts the kernel grew in place first, then the parts it now has.
    results.SyncWritten(impl->indices(), aliases.Alias(impl->indices()));
    results.SyncWritten(impl->values(), aliases.Alias(impl->values()));
    const at::SparseTensorImpl* cpu_impl = CooImpl(cpu);
    impl->raw_resize_(cpu_impl->sparse_dim(), cpu_impl->dense_dim(),
                      cpu.sizes());
    impl->set_indices_and_values_unsafe(results.FromCpu(cpu_impl->indices()),
                                        results.FromCpu(cpu_impl->values()));
    impl->set_coalesced(cpu_impl->coalesced());
    return;
  }
  if (IsCompressed(layout)) {
    at::SparseCsrTensorImpl* impl = CompressedImpl(original);
    results.SyncWritten(impl->compressed_indices(),
                        aliases.Alias(impl->compressed_indices()));
    results.SyncWritten(impl->plain_indices(),
                        aliases.Alias(impl->plain_indices()));
    results.SyncWritten(impl->values(), aliases.Alias(impl->values()));
    const at::SparseCsrTensorImpl* cpu_impl = CompressedImpl(cpu);
    impl->set_member_tensors(results.FromCpu(cpu_impl->compressed_indices()),
                             results.FromCpu(cpu_impl->plain_indices()),
                             results.FromCpu(cpu_impl->values()), cpu.sizes());
    return;
  }
  if (original.is_nested()) {
    // Nested ops write a nested argument's components in place, in the
    // memory its alias shares: a nested tensor cannot be resized, so no
    // kernel gives it new memory or metadata.
    return;
  }
  results.SyncWritten(original, cpu);
  at::get_qtensorimpl(original)->set_quantizer_(
      at::get_qtensorimpl(cpu)->quantizer());
}

}  // namespace openreg
