// Sparse and quantized openreg tensors in terms of strided ones.
//
// A sparse COO openreg tensor is a SparseTensorImpl whose indices and values
// are strided openreg tensors; a compressed one (CSR, CSC, BSR, BSC) holds
// its compressed indices, plain indices and values the same way; a quantized
// one is a QTensorImpl over an openreg storage of its integer dtype. Their
// quantizers live in host memory, as CUDA's do: a scale and zero point, or
// per-channel scale and zero-point tensors the kernels read.
//
// So each has a CPU counterpart over CPU aliases of its parts (cpu_alias.h),
// on which PyTorch's CPU kernels run, and each CPU result comes back as an
// openreg tensor over the parts KernelResults maps back.
//
// Thread-safety: as CpuAliases and KernelResults, one operator call's.
#ifndef OPENREG_CORE_ATEN_LAYOUT_TENSORS_H_
#define OPENREG_CORE_ATEN_LAYOUT_TENSORS_H_

#include <ATen/core/Tensor.h>

#include "core/aten/cpu_alias.h"
#include "core/aten/kernel_results.h"

namespace openreg {

// Whether `tensor` is sparse (any layout) or quantized: more than a shape
// over one storage.
bool HasLayoutParts(const at::Tensor& tensor);

// The CPU counterpart of the sparse or quantized openreg tensor `tensor`,
// over aliases of its parts made by `aliases`.
at::Tensor CpuCounterpart(const at::Tensor& tensor, CpuAliases& aliases);

// Gives the quantized CPU tensor `cpu` a quantizer in host memory: a kernel
// may have made its per-channel parameters in device memory, or over the
// aliases of an argument.
void KeepQuantizerOnHost(const at::Tensor& cpu);

// The openreg tensor for the sparse or quantized CPU result `cpu` of a
// kernel on `device`, over the parts `results` maps back.
at::Tensor OpenRegCounterpart(const at::Tensor& cpu, KernelResults& results,
                              c10::DeviceIndex device);

// Brings the CPU counterpart `cpu` of the written argument `original` back
// into `original`: a kernel may have given it new parts, or moved or
// reshaped the ones it had (the aliases `aliases` made of them).
void SyncWrittenCounterpart(const at::Tensor& original, const at::Tensor& cpu,
                            CpuAliases& aliases, KernelResults& results);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_LAYOUT_TENSORS_H_
