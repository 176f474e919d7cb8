// `_foreach_*` ops in one launch each (Note [One launch per foreach call],
// stream_work.h).
//
// ATen gives these ops a CompositeExplicitAutograd kernel that calls the
// per-tensor op for each index of the lists, and kernels of their own only
// for CUDA and XPU; a device without one runs the composite. openreg still
// runs ATen's composite, so checks, errors, type promotion and results stay
// ATen's, with the per-tensor ops' loops gathered into one piece of work.
// The composite is reached through the CPU entry of the op's dispatch table,
// which holds it because the CPU has no kernel of its own for these ops.
// Registration checks that: an op that gets a CPU kernel in a later torch
// keeps ATen's per-tensor path on openreg instead of running a CPU kernel on
// device tensors.
//
// The kernels are unboxed, one per overload, for the ops optimizers run
// (torch.optim's foreach updates, gradient clipping's scaling): a boxed
// kernel for every foreach op would convert each tensor list to an IValue
// list and back at every call, which cost a 4-tensor _foreach_lerp_ on
// cpu_sim about 1,300 instructions, more than the launches it saves there.
// Other foreach ops keep the per-tensor path.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/_foreach_abs_ops.h>
#include <ATen/ops/_foreach_add_ops.h>
#include <ATen/ops/_foreach_addcdiv_ops.h>
#include <ATen/ops/_foreach_addcmul_ops.h>
#include <ATen/ops/_foreach_div_ops.h>
#include <ATen/ops/_foreach_lerp_ops.h>
#include <ATen/ops/_foreach_maximum_ops.h>
#include <ATen/ops/_foreach_mul_ops.h>
#include <ATen/ops/_foreach_neg_ops.h>
#include <ATen/ops/_foreach_pow_ops.h>
#include <ATen/ops/_foreach_reciprocal_ops.h>
#include <ATen/ops/_foreach_sqrt_ops.h>
#include <ATen/ops/_foreach_sub_ops.h>
#include <ATen/ops/_foreach_zero_ops.h>
#include <c10/core/DispatchKey.h>
#include <c10/core/DispatchKeySet.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/torch_runtime/stream_work.h"

namespace openreg {
namespace {

namespace ops = at::_ops;

// The kernel of the overload `Op` (an at::_ops struct): ATen's composite,
// its loops launched together.
template <typename Op, typename Schema = typename Op::schema>
struct InOneLaunch;

template <typename Op, typename Result, typename... Args>
struct InOneLaunch<Op, Result(Args...)> {
  static Result Call(Args... args) {
    GatheredLaunch gathered(Op::name);
    const c10::DispatchKeySet composite(c10::DispatchKey::CPU);
    if constexpr (std::is_void_v<Result>) {
      Op::redispatch(composite, args...);
      gathered.Launch();
    } else {
      Result result = Op::redispatch(composite, args...);
      gathered.Launch();
      return result;
    }
  }
};

// Whether `op` runs ATen's composite on the CPU (no CPU kernel of its own, no
// implicit decomposition above autograd).
bool OnlyCompositeKernel(const c10::OperatorName& name) {
  const std::optional<c10::OperatorHandle> op =
      c10::Dispatcher::singleton().findOp(name);
  return op.has_value() &&
         op->hasKernelForDispatchKey(
             c10::DispatchKey::CompositeExplicitAutograd) &&
         !op->hasKernelForDispatchKey(c10::DispatchKey::CPU) &&
         !op->hasKernelForDispatchKey(
             c10::DispatchKey::CompositeImplicitAutograd);
}

// Registers InOneLaunch<Op> as the openreg kernel of `Op`, if it has only
// ATen's composite.
template <typename Op>
void RegisterInOneLaunch(torch::Library& library) {
  if (!OnlyCompositeKernel({Op::name, Op::overload_name})) return;
  constexpr std::string_view kNamespace = "aten::";
  std::string name(std::string_view(Op::name).substr(kNamespace.size()));
  if (*Op::overload_name != '\0') name += std::string(".") + Op::overload_name;
  library.impl(name.c_str(), TORCH_FN(InOneLaunch<Op>::Call));
}

template <typename... Ops>
void RegisterEachInOneLaunch(torch::Library& library) {
  (RegisterInOneLaunch<Ops>(library), ...);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  RegisterEachInOneLaunch<
      // Unary.
      ops::_foreach_abs, ops::_foreach_abs_, ops::_foreach_neg,
      ops::_foreach_neg_, ops::_foreach_sqrt, ops::_foreach_sqrt_,
      ops::_foreach_reciprocal, ops::_foreach_reciprocal_, ops::_foreach_zero_,
      // Binary, with a number, a list of numbers, a list of tensors, a tensor.
      ops::_foreach_add_Scalar, ops::_foreach_add__Scalar,
      ops::_foreach_add_ScalarList, ops::_foreach_add__ScalarList,
      ops::_foreach_add_List, ops::_foreach_add__List, ops::_foreach_add_Tensor,
      ops::_foreach_add__Tensor, ops::_foreach_sub_Scalar,
      ops::_foreach_sub__Scalar, ops::_foreach_sub_ScalarList,
      ops::_foreach_sub__ScalarList, ops::_foreach_sub_List,
      ops::_foreach_sub__List, ops::_foreach_mul_Scalar,
      ops::_foreach_mul__Scalar, ops::_foreach_mul_ScalarList,
      ops::_foreach_mul__ScalarList, ops::_foreach_mul_List,
      ops::_foreach_mul__List, ops::_foreach_mul_Tensor,
      ops::_foreach_mul__Tensor, ops::_foreach_div_Scalar,
      ops::_foreach_div__Scalar, ops::_foreach_div_ScalarList,
      ops::_foreach_div__ScalarList, ops::_foreach_div_List,
      ops::_foreach_div__List, ops::_foreach_div_Tensor,
      ops::_foreach_div__Tensor, ops::_foreach_maximum_List,
      ops::_foreach_maximum__List, ops::_foreach_pow_List,
      ops::_foreach_pow__List, ops::_foreach_pow_Scalar,
      ops::_foreach_pow__Scalar, ops::_foreach_pow_ScalarAndTensor,
      // Ternary: Adam's moments and update.
      ops::_foreach_lerp_Scalar, ops::_foreach_lerp__Scalar,
      ops::_foreach_lerp_List, ops::_foreach_lerp__List,
      ops::_foreach_addcmul_Scalar, ops::_foreach_addcmul__Scalar,
      ops::_foreach_addcmul_ScalarList, ops::_foreach_addcmul__ScalarList,
      ops::_foreach_addcmul_Tensor, ops::_foreach_addcmul__Tensor,
      ops::_foreach_addcdiv_Scalar, ops::_foreach_addcdiv__Scalar,
      ops::_foreach_addcdiv_ScalarList, ops::_foreach_addcdiv__ScalarList,
      ops::_foreach_addcdiv_Tensor, ops::_foreach_addcdiv__Tensor>(m);
}

}  // namespace
}  // namespace openreg
