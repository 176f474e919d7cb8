// From a CPU kernel's results back to openreg tensors.
//
// A kernel that ran on CPU aliases of device memory (cpu_alias.h) returns CPU
// tensors of four kinds: an argument's alias (the result is that openreg
// tensor), a view of an argument's memory (the same view of the openreg
// storage), a fresh tensor in device memory the kernel allocated (adopted
// without a copy, Note [Kernel allocations in device memory]), or a fresh
// tensor in host memory (copied to the device). The same four apply to a
// written argument whose kernel moved or reshaped it.
//
// Thread-safety: a KernelResults belongs to one operator call, on the thread
// that called the op, after its kernel ran.
#ifndef OPENREG_CORE_ATEN_KERNEL_RESULTS_H_
#define OPENREG_CORE_ATEN_KERNEL_RESULTS_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Storage.h>

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "core/aten/cpu_alias.h"
#include "core/aten/meta_shapes.h"

namespace openreg {

// A new strided openreg tensor of `spec` on `device`.
at::Tensor EmptyOnDevice(const TensorSpec& spec, c10::DeviceIndex device);

class KernelResults {
 public:
  // `aliases` are the kernel's arguments; they must outlive this object.
  KernelResults(c10::DeviceIndex device, const CpuAliases& aliases)
      : device_(device), aliases_(aliases) {}

  // The openreg tensor for the strided CPU result `result` (also a quantized
  // one, as a plain tensor of its integer dtype over the right memory).
  // Undefined and non-CPU results are returned as they are.
  at::Tensor FromCpu(const at::Tensor& result);

  // Brings `alias`, the alias of the written argument `original`, back into
  // `original` after its kernel may have moved or reshaped it.
  void SyncWritten(const at::Tensor& original, const at::Tensor& alias);

 private:
  // `result` as an openreg tensor over the device memory the kernel
  // allocated it in, or nullopt if it is in host memory.
  std::optional<at::Tensor> Adopt(const at::Tensor& result);

  c10::DeviceIndex device_;
  const CpuAliases& aliases_;
  // Kernel-allocated CPU storages already adopted, so results sharing one
  // storage keep sharing it.
  absl::flat_hash_map<const c10::StorageImpl*, c10::Storage> adopted_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_KERNEL_RESULTS_H_
