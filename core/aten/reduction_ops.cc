// Sums, means and vector norms over dimensions (sum.dim_IntList, mean.dim,
// linalg_vector_norm and their out= forms) without the CPU fallback's
// per-call bookkeeping: bias gradients and loss reductions, the largest
// fallback rows of training steps after the matrix products
// (docs/performance.md, "More ops through TensorIterator"), and the norm
// gradient clipping takes.
//
// All are structured ops: ATen's meta function checks the dimensions and
// dtype and sizes the result at the call, and the stream runs ATen's CPU
// implementation on CPU aliases (core/aten/structured_calls.h), with its own
// dtype conversions and accumulation order. A call goes to the CPU fallback,
// exactly as if these kernels were not registered, unless StructuredTakes
// its tensors (floating and complex ones: the dtypes training reduces; the
// fallback sums integers and bools, which promote, and raises the norm's
// error for them).
#include <ATen/ops/linalg_vector_norm_native.h>
#include <ATen/ops/mean_native.h>
#include <ATen/ops/sum_native.h>
#include <torch/library.h>

#include <optional>

#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"
#include "core/aten/structured_calls.h"

namespace openreg {
namespace {

// A reduction of `self` with the other arguments `args`: `Impl` is ATen's
// structured implementation.
template <typename Impl, typename... Args>
std::optional<at::Tensor> EnqueueReduction(const char* name,
                                           const at::Tensor& self,
                                           const at::Tensor* out,
                                           const Args&... args) {
  if (!StructuredTakes({&self}, out)) return std::nullopt;
  StructuredCall<Impl> call(
      out == nullptr ? OutputKind::kFresh : OutputKind::kOut, out);
  call.meta(self, args...);
  if (!call.accepted()) return std::nullopt;
  call.Enqueue(name, self, args...);
  return call.output();
}

struct Sum {
  static constexpr Overload kFunctional{"aten::sum", "dim_IntList"};
  static constexpr Overload kOut{"aten::sum", "IntList_out"};
  static std::optional<at::Tensor> Enqueue(
      const at::Tensor& self, const at::Tensor* out,
      at::OptionalIntArrayRef dim, bool keepdim,
      std::optional<at::ScalarType> dtype) {
    return EnqueueReduction<at::native::structured_sum_out>(
        "aten::sum", self, out, dim, keepdim, dtype);
  }
};

struct Mean {
  static constexpr Overload kFunctional{"aten::mean", "dim"};
  static constexpr Overload kOut{"aten::mean", "out"};
  static std::optional<at::Tensor> Enqueue(
      const at::Tensor& self, const at::Tensor* out,
      at::OptionalIntArrayRef dim, bool keepdim,
      std::optional<at::ScalarType> dtype) {
    return EnqueueReduction<at::native::structured_mean_out>(
        "aten::mean", self, out, dim, keepdim, dtype);
  }
};

struct VectorNorm {
  static constexpr Overload kFunctional{"aten::linalg_vector_norm", ""};
  static constexpr Overload kOut{"aten::linalg_vector_norm", "out"};
  static std::optional<at::Tensor> Enqueue(
      const at::Tensor& self, const at::Tensor* out, const c10::Scalar& ord,
      at::OptionalIntArrayRef dim, bool keepdim,
      std::optional<at::ScalarType> dtype) {
    return EnqueueReduction<at::native::structured_linalg_vector_norm_out>(
        "aten::linalg_vector_norm", self, out, ord, dim, keepdim, dtype);
  }
};

using SumForms =
    Forms<Sum, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>>;
using MeanForms =
    Forms<Mean, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>>;
using VectorNormForms = Forms<VectorNorm, const c10::Scalar&,
                              at::OptionalIntArrayRef, bool,
                              std::optional<at::ScalarType>>;

}  // namespace

void RegisterReductionKernels(torch::Library& m) {
  m.impl("sum.dim_IntList", TORCH_FN(SumForms::Functional));
  m.impl("sum.IntList_out", TORCH_FN(SumForms::Out));
  m.impl("mean.dim", TORCH_FN(MeanForms::Functional));
  m.impl("mean.out", TORCH_FN(MeanForms::Out));
  m.impl("linalg_vector_norm", TORCH_FN(VectorNormForms::Functional));
  m.impl("linalg_vector_norm.out", TORCH_FN(VectorNormForms::Out));
}

}  // namespace openreg
