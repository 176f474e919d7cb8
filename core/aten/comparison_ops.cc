// Comparisons (eq, ne, lt, le, gt, ge) of a tensor with a tensor or a
// number, functional, in-place and out=, without the CPU fallback: the masks
// models build between layers (label smoothing's and ignore_index's, padding
// and attention masks), each of which cost a small call about 1.6x CPU
// eager's time on the fallback (docs/performance.md, "Comparisons off the
// fallback").
//
// Each is a Pointwise description (iterator_loops.h): the calling thread
// builds ATen's comparison iterator (a bool result unless the call gives an
// output) and the stream runs the op's CPU loop. The loops read both
// operands in one dtype, which TensorIterator converts to only on the CPU,
// so a call is taken when its operands already share one: two openreg
// tensors, or an openreg tensor and a CPU scalar tensor, of one LoopDtype,
// or a tensor and a number that type promotion ranks no higher than the
// tensor's dtype (`x > 0.5` on floats, `labels == -100` on int64). The
// number becomes a CPU scalar of the tensor's dtype, converted as ATen's
// CPU conversion does (`uint8_tensor == 300` compares with 44, as on the
// CPU). The output is bool or the operands' dtype (in-place), which the
// loops write either way. The ordering comparisons of complex tensors,
// which ATen refuses, and everything else go to the fallback.
#include <ATen/Dispatch.h>
#include <ATen/EmptyTensor.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/BinaryOps.h>
#include <torch/library.h>

#include <string>

#include "core/aten/argument_devices.h"
#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"

namespace openreg {
namespace {

// Whether an output `out` (null: a fresh bool result) can take a comparison
// of operands of `dtype` without a conversion.
bool OutputTakes(const at::Tensor* out, at::ScalarType dtype) {
  return out == nullptr ||
         (IsOpenReg(*out) && Plain(*out) &&
          (out->scalar_type() == at::kBool || out->scalar_type() == dtype));
}

// Whether the loop takes `self` as its first operand: a plain openreg
// tensor of a LoopDtype that `takes` accepts.
bool SelfTakes(const at::Tensor& self, bool (*takes)(at::ScalarType)) {
  return IsOpenReg(self) && Plain(self) && LoopDtype(self.scalar_type()) &&
         takes(self.scalar_type());
}

// `number` as a CPU scalar tensor of `dtype`, its value converted as
// ATen's CPU conversion of a wrapped number converts it (without a range
// check). elementwise_ops.cc's NumberAs converts the same way from a wrapped
// number tensor, without making a Scalar: add and mul by a number run it on
// every call, and going through a Scalar cost them ~490 instructions.
at::Tensor NumberOperand(const c10::Scalar& number, at::ScalarType dtype) {
  at::Tensor operand = at::detail::empty_cpu({}, dtype);
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND(
      at::kBool, dtype, "openreg_number_operand", [&] {
        scalar_t* value = operand.mutable_data_ptr<scalar_t>();
        if (number.isComplex()) {
          *value = c10::convert<scalar_t>(number.toComplexDouble());
        } else if (number.isFloatingPoint()) {
          *value = c10::convert<scalar_t>(number.toDouble());
        } else if (number.isBoolean()) {
          *value = c10::convert<scalar_t>(number.toBool());
        } else {
          *value = c10::convert<scalar_t>(number.toLong());
        }
      });
  operand.unsafeGetTensorImpl()->set_wrapped_number(true);
  return operand;
}

// The comparison `kOp` ("aten::eq") with a tensor, computed by `Stub`'s
// loop on the dtypes `kTakes` accepts.
template <const char* kOp, const char* kInPlaceOp, auto& Stub,
          bool (*kTakes)(at::ScalarType)>
struct WithTensor {
  static constexpr const char* kName = kOp;
  static constexpr Overload kFunctional{kOp, "Tensor"};
  static constexpr Overload kInPlace{kInPlaceOp, "Tensor"};
  static constexpr Overload kOut{kOp, "Tensor_out"};
  static bool Takes(const at::Tensor* out, const at::Tensor& self,
                    const at::Tensor& other) {
    if (!SelfTakes(self, kTakes)) return false;
    const bool placed =
        IsOpenReg(other) || (other.is_cpu() && other.dim() == 0);
    return placed && Plain(other) &&
           other.scalar_type() == self.scalar_type() &&
           OutputTakes(out, self.scalar_type());
  }
  static void Check(const at::Tensor& /*self*/, const at::Tensor& /*other*/) {}
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const at::Tensor& other) {
    iter.build_comparison_op(out, self, other);
  }
  static auto Loop(const at::Tensor& /*other*/) { return &RunStub<Stub>; }
};

// The same comparison with a number.
template <const char* kOp, const char* kInPlaceOp, auto& Stub,
          bool (*kTakes)(at::ScalarType)>
struct WithNumber {
  static constexpr const char* kName = kOp;
  static constexpr Overload kFunctional{kOp, "Scalar"};
  static constexpr Overload kInPlace{kInPlaceOp, "Scalar"};
  static constexpr Overload kOut{kOp, "Scalar_out"};
  static bool Takes(const at::Tensor* out, const at::Tensor& self,
                    const c10::Scalar& other) {
    return SelfTakes(self, kTakes) && !other.isSymbolic() &&
           CategoryOf(other) <= CategoryOf(self.scalar_type()) &&
           OutputTakes(out, self.scalar_type());
  }
  static void Check(const at::Tensor& /*self*/, const c10::Scalar& /*other*/) {
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const c10::Scalar& other) {
    iter.build_comparison_op(out, self,
                             NumberOperand(other, self.scalar_type()));
  }
  static auto Loop(const c10::Scalar& /*other*/) { return &RunStub<Stub>; }
};

// Registers the six overloads of the comparison `name` ("eq").
template <const char* kOp, const char* kInPlaceOp, auto& Stub,
          bool (*kTakes)(at::ScalarType)>
void RegisterComparison(torch::Library& m, const std::string& name) {
  using Tensor = Forms<Pointwise<WithTensor<kOp, kInPlaceOp, Stub, kTakes>>,
                       const at::Tensor&>;
  using Number = Forms<Pointwise<WithNumber<kOp, kInPlaceOp, Stub, kTakes>>,
                       const c10::Scalar&>;
  m.impl((name + ".Tensor").c_str(), TORCH_FN(Tensor::Functional));
  m.impl((name + "_.Tensor").c_str(), TORCH_FN(Tensor::InPlace));
  m.impl((name + ".Tensor_out").c_str(), TORCH_FN(Tensor::Out));
  m.impl((name + ".Scalar").c_str(), TORCH_FN(Number::Functional));
  m.impl((name + "_.Scalar").c_str(), TORCH_FN(Number::InPlace));
  m.impl((name + ".Scalar_out").c_str(), TORCH_FN(Number::Out));
}

bool AnyDtype(at::ScalarType /*dtype*/) { return true; }

constexpr char kEq[] = "aten::eq", kEqInPlace[] = "aten::eq_";
constexpr char kNe[] = "aten::ne", kNeInPlace[] = "aten::ne_";
constexpr char kLt[] = "aten::lt", kLtInPlace[] = "aten::lt_";
constexpr char kLe[] = "aten::le", kLeInPlace[] = "aten::le_";
constexpr char kGt[] = "aten::gt", kGtInPlace[] = "aten::gt_";
constexpr char kGe[] = "aten::ge", kGeInPlace[] = "aten::ge_";

}  // namespace

void RegisterComparisonKernels(torch::Library& m) {
  RegisterComparison<kEq, kEqInPlace, at::native::eq_stub, AnyDtype>(m, "eq");
  RegisterComparison<kNe, kNeInPlace, at::native::ne_stub, AnyDtype>(m, "ne");
  // Complex numbers have no order: ATen raises, from the fallback.
  RegisterComparison<kLt, kLtInPlace, at::native::lt_stub, Real>(m, "lt");
  RegisterComparison<kLe, kLeInPlace, at::native::le_stub, Real>(m, "le");
  RegisterComparison<kGt, kGtInPlace, at::native::gt_stub, Real>(m, "gt");
  RegisterComparison<kGe, kGeInPlace, at::native::ge_stub, Real>(m, "ge");
}

}  // namespace openreg
