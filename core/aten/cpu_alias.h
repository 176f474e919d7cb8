// Views of openreg device memory as CPU tensors.
//
// A simulated device's memory is host memory, so an ATen CPU kernel can run on
// it directly: wrap the storage as a non-owning CPU storage and give the CPU
// tensor the same sizes, strides and offset. No data is copied. Such aliases
// may only be touched inside a function launched on the device's stream
// (core/torch_runtime/stream_work.h), where the driver guarantees earlier work is done.
//
// Thread-safety: a CpuAliases object belongs to one operator call.
#ifndef OPENREG_CORE_ATEN_CPU_ALIAS_H_
#define OPENREG_CORE_ATEN_CPU_ALIAS_H_

#include <ATen/core/Tensor.h>

#include "absl/container/flat_hash_map.h"

namespace openreg {

class CpuAliases {
 public:
  // A CPU tensor over the same memory as `tensor`, with its conjugate and
  // negative bits; the same alias every time for the same tensor. Tensors
  // sharing an openreg storage get CPU tensors sharing one CPU storage, so
  // kernels see their aliasing exactly as it is.
  at::Tensor Alias(const at::Tensor& tensor);

  // The openreg tensor whose alias is `cpu_tensor` (same TensorImpl), if any.
  const at::Tensor* OriginalOf(const at::Tensor& cpu_tensor) const;

  // The openreg storage whose alias holds `cpu_tensor`'s storage, if any.
  const c10::Storage* OriginalStorageOf(const at::Tensor& cpu_tensor) const;

  // Drops the references to the original openreg tensors and keeps their
  // storages. Enqueued work needs the memory, not the tensors; and while C++
  // holds a tensor whose Python object was dropped, PyTorch keeps that object
  // alive, so every result of a queued op would linger for the garbage
  // collector until the work is reaped. After this, OriginalOf finds nothing.
  void ForgetOriginalTensors();

 private:
  struct StorageAlias {
    c10::Storage original;
    c10::Storage cpu;
  };
  absl::flat_hash_map<const c10::StorageImpl*, StorageAlias> storages_;
  // CPU TensorImpl -> the openreg tensor it aliases.
  absl::flat_hash_map<const c10::TensorImpl*, at::Tensor> tensors_;
  // openreg TensorImpl -> its alias.
  absl::flat_hash_map<const c10::TensorImpl*, at::Tensor> aliases_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_CPU_ALIAS_H_
