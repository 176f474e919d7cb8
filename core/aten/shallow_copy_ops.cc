// Whether one tensor's data may replace another's in place
// (`_has_compatible_shallow_copy_type`), which `param.data = t`
// (Variable::set_data) and nn.Module.to() ask before swapping a parameter's
// data. ATen's answer (TensorImpl::has_compatible_shallow_copy_type) lists the
// dense in-tree backends, CPU and CUDA among them, but not PrivateUse1. Without
// this kernel a CPU tensor and an openreg tensor were "incompatible":
// `param.data = param.to("openreg")` raised, and Module.to() replaced every
// Parameter with a new one, silently untying shared weights. openreg tensors
// are plain strided TensorImpls like CUDA's, so they are compatible with the
// same dense tensors CUDA's are.
#include <c10/core/DispatchKeySet.h>

#include <ATen/ops/empty.h>

#include "core/aten/native_ops.h"

namespace openreg {
namespace {

bool IsDenseOpenReg(c10::DispatchKeySet keys) {
  return keys.has(c10::DispatchKey::Dense) &&
         keys.has_backend(c10::BackendComponent::PrivateUse1Bit);
}

// Whether ATen counts a tensor with `keys` as dense on one of its listed
// backends. Asked of a dense CPU tensor, ATen's check is exactly that, so the
// list of backends stays in one place: ATen's.
bool IsDenseForAten(c10::DispatchKeySet keys) {
  // Leaked on purpose: the kernel may run during interpreter shutdown, after
  // static destructors.
  static const at::Tensor* const dense_cpu_probe = new at::Tensor(at::empty({0}));
  return dense_cpu_probe->unsafeGetTensorImpl()
      ->has_compatible_shallow_copy_type(keys);
}

bool IsDense(c10::DispatchKeySet keys) {
  return IsDenseOpenReg(keys) || IsDenseForAten(keys);
}

}  // namespace

bool HasCompatibleShallowCopyType(const at::Tensor& self,
                                  const at::Tensor& from) {
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(
             from.key_set()) ||
         (IsDense(self.key_set()) && IsDense(from.key_set()));
}

}  // namespace openreg
