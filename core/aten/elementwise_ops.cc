// Binary arithmetic (add, sub, mul, div) without the CPU fallback's per-call
// bookkeeping. These are most of a training step's ops (optimizer updates,
// residuals, scaling) and cost little on the CPU, so what openreg adds per
// call is most of their cost (docs/performance.md, "Elementwise ops through
// TensorIterator").
//
// The calling thread builds ATen's TensorIterator over the openreg tensors and
// the stream runs the op's CPU loop (core/aten/iterator_loops.h). No CPU alias
// tensors, no boxed stack, no meta shapes.
//
// ATen's CPU loops do not convert dtypes: on the CPU, TensorIterator makes
// converted temporaries of mismatched inputs, and it does so only for the CPU.
// So this path takes the calls whose tensors all have one dtype, after a
// Python number is converted to it where type promotion keeps the tensor's
// dtype (x * 0.5 on a float tensor), in the dtypes of LoopDtype. Anything
// else (mixed dtypes, other dtypes, lazily conjugated or negated arguments,
// CPU tensors that are not scalars) goes to the CPU fallback, which handles
// every case, exactly as if these kernels were not registered.
#include <ATen/Dispatch.h>
#include <ATen/EmptyTensor.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/BinaryOps.h>
#include <c10/util/TypeCast.h>
#include <torch/library.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "core/aten/argument_devices.h"
#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"

namespace openreg {
namespace {

// The value of a wrapped Python number, converted as ATen's CPU copy kernel
// converts (no overflow check), so the result matches the CPU's temporaries.
template <typename T>
T NumberValue(const at::Tensor& number) {
  const void* data = number.const_data_ptr();
  switch (number.scalar_type()) {
    case at::kDouble:
      return c10::convert<T>(*static_cast<const double*>(data));
    case at::kLong:
      return c10::convert<T>(*static_cast<const int64_t*>(data));
    case at::kBool:
      return c10::convert<T>(*static_cast<const bool*>(data));
    case at::kComplexDouble:
      return c10::convert<T>(*static_cast<const c10::complex<double>*>(data));
    default:
      TORCH_INTERNAL_ASSERT(false,
                            "openreg internal error: a wrapped number "
                            "of dtype ",
                            number.scalar_type());
  }
}

// `other` as an operand of a floating or complex `dtype` op: a Python number
// that type promotion ranks below the tensor becomes a CPU scalar of
// `dtype`; anything else stays as it is (and is checked by the caller).
at::Tensor NumberAs(const at::Tensor& other, at::ScalarType dtype) {
  if (!other.unsafeGetTensorImpl()->is_wrapped_number() ||
      other.scalar_type() == dtype ||
      CategoryOf(other.scalar_type()) > CategoryOf(dtype) ||
      CategoryOf(dtype) < PromotionCategory::kFloating) {
    return other;
  }
  if (!LoopDtype(dtype)) return other;
  at::Tensor converted = at::detail::empty_cpu({}, dtype);
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(dtype, "openreg_number_as", [&] {
    *converted.mutable_data_ptr<scalar_t>() = NumberValue<scalar_t>(other);
  });
  converted.unsafeGetTensorImpl()->set_wrapped_number(true);
  return converted;
}

// Whether a binary op on the openreg tensor `self` and its other operand
// `other` (already through NumberAs, and in either order), writing `out` if
// given, can run its CPU loop without conversions.
bool LoopReady(const at::Tensor& self, const at::Tensor& other,
               const at::Tensor* out) {
  if (!IsOpenReg(self) || !Plain(self) || !Plain(other)) return false;
  if (!LoopDtype(self.scalar_type())) return false;
  if (other.scalar_type() != self.scalar_type()) return false;
  if (!IsOpenReg(other) && !(other.is_cpu() && other.dim() == 0)) {
    return false;
  }
  if (out == nullptr) return true;
  return IsOpenReg(*out) && Plain(*out) &&
         out->scalar_type() == self.scalar_type();
}

// One binary op: its ATen names, which dtypes its loop takes, ATen's checks
// of its arguments, how ATen builds its iterator, and the CPU loop that runs
// it. add and sub take an alpha, mul and div none.
struct AddOp {
  static constexpr const char* kName = "aten::add";
  static constexpr const char* kInPlaceName = "aten::add_";
  static bool Takes(at::ScalarType /*dtype*/) { return true; }
  static void Check(const at::Tensor& self, const at::Tensor& /*other*/,
                    const c10::Scalar& alpha) {
    at::native::alpha_check(self.scalar_type(), alpha);
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const at::Tensor& other) {
    iter.build_binary_op(out, self, other);
  }
  static void Run(at::TensorIteratorBase& iter, const c10::Scalar& alpha) {
    at::native::add_stub(c10::DeviceType::CPU, iter, alpha);
  }
};

struct SubOp {
  static constexpr const char* kName = "aten::sub";
  static constexpr const char* kInPlaceName = "aten::sub_";
  static bool Takes(at::ScalarType /*dtype*/) { return true; }
  static void Check(const at::Tensor& self, const at::Tensor& other,
                    const c10::Scalar& alpha) {
    at::native::sub_check(self, other);
    at::native::alpha_check(self.scalar_type(), alpha);
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const at::Tensor& other) {
    iter.build_binary_op(out, self, other);
  }
  // ATen's CPU sub is add with the negated alpha.
  static void Run(at::TensorIteratorBase& iter, const c10::Scalar& alpha) {
    at::native::add_stub(c10::DeviceType::CPU, iter, -alpha);
  }
};

struct MulOp {
  static constexpr const char* kName = "aten::mul";
  static constexpr const char* kInPlaceName = "aten::mul_";
  static bool Takes(at::ScalarType /*dtype*/) { return true; }
  static void Check(const at::Tensor& /*self*/, const at::Tensor& /*other*/) {}
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const at::Tensor& other) {
    iter.build_binary_op(out, self, other);
  }
  static void Run(at::TensorIteratorBase& iter) {
    at::native::mul_stub(c10::DeviceType::CPU, iter);
  }
};

// True division; integer tensors promote to float, so the loop takes
// floating and complex tensors only (the others need a conversion).
struct DivOp {
  static constexpr const char* kName = "aten::div";
  static constexpr const char* kInPlaceName = "aten::div_";
  static bool Takes(at::ScalarType dtype) { return FloatingOrComplex(dtype); }
  static void Check(const at::Tensor& /*self*/, const at::Tensor& /*other*/) {}
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const at::Tensor& other) {
    iter.build_binary_float_op(out, self, other);
  }
  static void Run(at::TensorIteratorBase& iter) {
    at::native::div_true_stub(c10::DeviceType::CPU, iter);
  }
};

// Enqueues `BinaryOp`'s loop for `self` and `other` writing `out` (null: a
// fresh result) and returns the result, or nothing when the loop cannot
// take the call and the fallback must. The openreg tensor may be either
// operand: ATen's composite kernels put a Python number first in `1 - t`
// (rsub) and in C++'s Tensor::mul_(Scalar) (mul_out(self, number, self)),
// which the foreach kernels of Adam, AdamW and SGD call. The loop reads a CPU
// scalar in either place, so the operands keep ATen's order.
template <typename BinaryOp, typename... Alpha>
std::optional<at::Tensor> EnqueueBinaryLoop(const at::Tensor& self,
                                            const at::Tensor& other,
                                            const at::Tensor* out,
                                            const Alpha&... alpha) {
  const bool number_first = !IsOpenReg(self) && IsOpenReg(other);
  const at::Tensor& tensor = number_first ? other : self;
  const at::Tensor operand =
      NumberAs(number_first ? self : other, tensor.scalar_type());
  if (!LoopReady(tensor, operand, out) ||
      !BinaryOp::Takes(tensor.scalar_type())) {
    return std::nullopt;
  }
  // ATen checks the number as given (sub rejects a Python bool).
  BinaryOp::Check(self, other, alpha...);
  // An in-place op's iterator raises if `other` would broadcast `self` to
  // another shape: it never resizes its tensor. An out= one resizes `out`.
  at::TensorBase out_base;
  if (out != nullptr) out_base = *out;
  return EnqueueLoopWriting(
      out, tensor.device().index(), BinaryOp::kName,
      [&](at::TensorIteratorBase& iter) {
        if (number_first) {
          BinaryOp::Build(iter, out_base, operand, tensor);
        } else {
          BinaryOp::Build(iter, out_base, tensor, operand);
        }
      },
      [alpha...](at::TensorIteratorBase& it) { BinaryOp::Run(it, alpha...); });
}

// `BinaryOp` as Forms' kernel: its (self, other, alpha...) overloads.
template <typename BinaryOp>
struct Binary {
  static constexpr Overload kFunctional{BinaryOp::kName, "Tensor"};
  static constexpr Overload kInPlace{BinaryOp::kInPlaceName, "Tensor"};
  static constexpr Overload kOut{BinaryOp::kName, "out"};
  template <typename... Alpha>
  static std::optional<at::Tensor> Enqueue(const at::Tensor& self,
                                           const at::Tensor* out,
                                           const at::Tensor& other,
                                           const Alpha&... alpha) {
    return EnqueueBinaryLoop<BinaryOp>(self, other, out, alpha...);
  }
};

using Add = Forms<Binary<AddOp>, const at::Tensor&, const c10::Scalar&>;
using Sub = Forms<Binary<SubOp>, const at::Tensor&, const c10::Scalar&>;
using Mul = Forms<Binary<MulOp>, const at::Tensor&>;
using Div = Forms<Binary<DivOp>, const at::Tensor&>;

}  // namespace

void RegisterElementwiseKernels(torch::Library& m) {
  m.impl("add.Tensor", TORCH_FN(Add::Functional));
  m.impl("add_.Tensor", TORCH_FN(Add::InPlace));
  m.impl("add.out", TORCH_FN(Add::Out));
  m.impl("sub.Tensor", TORCH_FN(Sub::Functional));
  m.impl("sub_.Tensor", TORCH_FN(Sub::InPlace));
  m.impl("sub.out", TORCH_FN(Sub::Out));
  m.impl("mul.Tensor", TORCH_FN(Mul::Functional));
  m.impl("mul_.Tensor", TORCH_FN(Mul::InPlace));
  m.impl("mul.out", TORCH_FN(Mul::Out));
  m.impl("div.Tensor", TORCH_FN(Div::Functional));
  m.impl("div_.Tensor", TORCH_FN(Div::InPlace));
  m.impl("div.out", TORCH_FN(Div::Out));
}

}  // namespace openreg
