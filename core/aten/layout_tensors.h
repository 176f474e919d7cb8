// Sparse, quantized and nested openreg tensors in terms of strided ones.
//
// A sparse COO openreg tensor is a SparseTensorImpl whose indices and values
// are strided openreg tensors; a compressed one (CSR, CSC, BSR, BSC) holds
// its compressed indices, plain indices and values the same way; a quantized
// one is a QTensorImpl over an openreg storage of its integer dtype. Their
// quantizers live in host memory, as CUDA's do: a scale and zero point, or
// per-channel scale and zero-point tensors the kernels read. A nested one
// (torch.nested's strided layout) is a NestedTensorImpl over an openreg
// storage holding every component; its nested sizes, strides and storage
// offsets are CPU tensors in host memory, as on CUDA.
//
// So each has a CPU counterpart over CPU aliases of its parts (cpu_alias.h),
// on which PyTorch's CPU kernels run, and each CPU result comes back as an
// openreg tensor over the parts KernelResults maps back.
//
// Thread-safety: as CpuAliases and KernelResults, one operator call's.
#ifndef OPENREG_CORE_ATEN_LAYOUT_TENSORS_H_
#define OPENREG_CORE_ATEN_LAYOUT_TENSORS_H_

#include <ATen/core/Tensor.h>

#include <array>

#include "core/aten/cpu_alias.h"
#include "core/aten/kernel_results.h"

namespace openreg {

// Whether `tensor` is sparse (any layout), quantized or nested: more than a
// shape over one storage.
bool HasLayoutParts(const at::Tensor& tensor);

// The CPU counterpart of the sparse, quantized or nested openreg tensor
// `tensor`, over aliases of its parts made by `aliases`.
at::Tensor CpuCounterpart(const at::Tensor& tensor, CpuAliases& aliases);

// The nested tensor metadata (sizes, strides, storage offsets) of `tensor`,
// a nested CPU or openreg tensor: CPU tensors in host memory.
std::array<at::Tensor, 3> NestedMetadata(const at::Tensor& tensor);

// The nested CPU result `cpu` of a kernel with its metadata copied to host
// memory: a kernel running on device memory made it there.
at::Tensor WithNestedMetadataOnHost(const at::Tensor& cpu);

// Gives the quantized CPU tensor `cpu` a quantizer in host memory: a kernel
// may have made its per-channel parameters in device memory, or over the
// aliases of an argument.
void KeepQuantizerOnHost(const at::Tensor& cpu);

// The openreg tensor for the sparse, quantized or nested CPU result `cpu` of
// a kernel on `device`, over the parts `results` maps back.
at::Tensor OpenRegCounterpart(const at::Tensor& cpu, KernelResults& results,
                              c10::DeviceIndex device);

// Brings the CPU counterpart `cpu` of the written argument `original` back
// into `original`: a kernel may have given it new parts, or moved or
// reshaped the ones it had (the aliases `aliases` made of them).
void SyncWrittenCounterpart(const at::Tensor& original, const at::Tensor& cpu,
                            CpuAliases& aliases, KernelResults& results);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_LAYOUT_TENSORS_H_
