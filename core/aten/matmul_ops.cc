// Matrix products (mm, addmm, bmm, baddbmm) without the CPU fallback's
// per-call bookkeeping. They are the ops real training steps sent to the
// fallback most (linear layers forward and backward, attention, and the
// extern kernels of torch.compile'd graphs; docs/performance.md, "More ops
// through TensorIterator").
//
// Each is a structured op: ATen's meta function checks the arguments and
// sizes the result at the call, and the stream runs ATen's CPU implementation
// on CPU aliases (core/aten/structured_calls.h), so layouts (transposed or
// strided operands and outputs), BLAS calls and results are the CPU's. A call
// goes to the CPU fallback, exactly as if these kernels were not registered,
// unless StructuredTakes its tensors. The scalars it converts (alpha, beta) are
// checked at the call for the same reason, and so is whether addmm's and
// baddbmm's `self` broadcasts to the result, which the CPU implementation
// checks only when it runs.
#include <ATen/ExpandUtils.h>
#include <ATen/ops/addmm_native.h>
#include <ATen/ops/baddbmm_native.h>
#include <ATen/ops/bmm_native.h>
#include <ATen/ops/mm_native.h>
#include <torch/library.h>

#include <optional>

#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"
#include "core/aten/structured_arguments.h"
#include "core/aten/structured_calls.h"

namespace openreg {
namespace {

// Raises at the call what converting `value` to the type the CPU
// implementation computes in would raise inside work (float for half and
// bfloat16, the dtype itself otherwise).
void CheckFactorFits(at::ScalarType dtype, const c10::Scalar& value) {
  const bool reduced = dtype == at::kHalf || dtype == at::kBFloat16;
  CheckScalarFits(reduced ? at::kFloat : dtype, value);
}

// mm and bmm: (self, other) -> self @ other.
template <typename Impl>
std::optional<at::Tensor> EnqueueProduct(const char* name,
                                         const at::Tensor& self,
                                         const at::Tensor* out,
                                         const at::Tensor& other) {
  if (!StructuredTakes({&self, &other}, out)) return std::nullopt;
  StructuredCall<Impl> call(OutputKindOf(self, out), out);
  call.meta(self, other);
  if (!call.accepted()) return std::nullopt;
  call.Enqueue(name, self, other);
  return call.output();
}

// addmm and baddbmm: beta * self + alpha * (first @ second).
template <typename Impl>
std::optional<at::Tensor> EnqueueScaledProduct(
    const char* name, const at::Tensor& self, const at::Tensor* out,
    const at::Tensor& first, const at::Tensor& second, const c10::Scalar& beta,
    const c10::Scalar& alpha) {
  if (!StructuredTakes({&self, &first, &second}, out)) return std::nullopt;
  StructuredCall<Impl> call(OutputKindOf(self, out), out);
  call.meta(self, first, second, beta, alpha);
  if (!call.accepted() ||
      !at::is_expandable_to(self.sizes(), call.output().sizes())) {
    return std::nullopt;
  }
  CheckFactorFits(self.scalar_type(), beta);
  CheckFactorFits(self.scalar_type(), alpha);
  call.Enqueue(name, self, first, second, beta, alpha);
  return call.output();
}

struct Mm {
  static constexpr Overload kFunctional{"aten::mm", ""};
  static constexpr Overload kOut{"aten::mm", "out"};
  static std::optional<at::Tensor> Enqueue(const at::Tensor& self,
                                           const at::Tensor* out,
                                           const at::Tensor& other) {
    return EnqueueProduct<at::native::structured_mm_out_cpu>("aten::mm", self,
                                                             out, other);
  }
};

struct Bmm {
  static constexpr Overload kFunctional{"aten::bmm", ""};
  static constexpr Overload kOut{"aten::bmm", "out"};
  static std::optional<at::Tensor> Enqueue(const at::Tensor& self,
                                           const at::Tensor* out,
                                           const at::Tensor& other) {
    return EnqueueProduct<at::native::structured_bmm_out_cpu>("aten::bmm", self,
                                                              out, other);
  }
};

struct Addmm {
  static constexpr Overload kFunctional{"aten::addmm", ""};
  static constexpr Overload kInPlace{"aten::addmm_", ""};
  static constexpr Overload kOut{"aten::addmm", "out"};
  static std::optional<at::Tensor> Enqueue(const at::Tensor& self,
                                           const at::Tensor* out,
                                           const at::Tensor& first,
                                           const at::Tensor& second,
                                           const c10::Scalar& beta,
                                           const c10::Scalar& alpha) {
    return EnqueueScaledProduct<at::native::structured_addmm_out_cpu>(
        "aten::addmm", self, out, first, second, beta, alpha);
  }
};

struct Baddbmm {
  static constexpr Overload kFunctional{"aten::baddbmm", ""};
  static constexpr Overload kInPlace{"aten::baddbmm_", ""};
  static constexpr Overload kOut{"aten::baddbmm", "out"};
  static std::optional<at::Tensor> Enqueue(const at::Tensor& self,
                                           const at::Tensor* out,
                                           const at::Tensor& first,
                                           const at::Tensor& second,
                                           const c10::Scalar& beta,
                                           const c10::Scalar& alpha) {
    return EnqueueScaledProduct<at::native::structured_baddbmm_out_cpu>(
        "aten::baddbmm", self, out, first, second, beta, alpha);
  }
};

using MmForms = Forms<Mm, const at::Tensor&>;
using BmmForms = Forms<Bmm, const at::Tensor&>;
using AddmmForms = Forms<Addmm, const at::Tensor&, const at::Tensor&,
                         const c10::Scalar&, const c10::Scalar&>;
using BaddbmmForms = Forms<Baddbmm, const at::Tensor&, const at::Tensor&,
                           const c10::Scalar&, const c10::Scalar&>;

}  // namespace

void RegisterMatmulKernels(torch::Library& m) {
  m.impl("mm", TORCH_FN(MmForms::Functional));
  m.impl("mm.out", TORCH_FN(MmForms::Out));
  m.impl("bmm", TORCH_FN(BmmForms::Functional));
  m.impl("bmm.out", TORCH_FN(BmmForms::Out));
  m.impl("addmm", TORCH_FN(AddmmForms::Functional));
  m.impl("addmm_", TORCH_FN(AddmmForms::InPlace));
  m.impl("addmm.out", TORCH_FN(AddmmForms::Out));
  m.impl("baddbmm", TORCH_FN(BaddbmmForms::Functional));
  m.impl("baddbmm_", TORCH_FN(BaddbmmForms::InPlace));
  m.impl("baddbmm.out", TORCH_FN(BaddbmmForms::Out));
}

}  // namespace openreg
