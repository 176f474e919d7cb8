// Elementary functions of one tensor without the CPU fallback: neg, abs,
// sign and sgn, exp, log, log1p, expm1, sqrt, rsqrt, reciprocal, sin, cos,
// and clamp by numbers. Models call them between the layers (a norm's
// rsqrt, a loss's log, an L1 loss's abs and its gradient's sgn, positional
// encodings' sin and cos, gradient clipping's clamp and reciprocal). On the
// fallback each cost about 1 µs more than CPU eager's whole call, up to 2.1×
// its time on a small tensor (docs/performance.md, "Functions of one tensor
// off the fallback").
//
// Each is a Pointwise description (iterator_loops.h): the calling thread
// builds ATen's TensorIterator as the CPU kernel's meta function does, and
// the stream runs the op's CPU loop. Calls the loops do not take go to the
// CPU fallback, exactly as if these kernels were not registered: integer
// inputs of the float functions (exp, log, ...), which ATen promotes to
// float; a dtype a loop has no kernel for, whose error ATen raises (neg and
// abs of bool, sign of a complex tensor, clamp of a complex or integer
// tensor); half and bfloat16; mixed dtypes; lazily conjugated tensors.
#include <ATen/TensorIterator.h>
#include <ATen/native/TensorCompare.h>
#include <ATen/native/UnaryOps.h>
#include <torch/library.h>

#include <cmath>
#include <optional>

#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"

namespace openreg {
namespace {

constexpr c10::DeviceType kCpu = c10::DeviceType::CPU;

// Functions that keep their input's dtype (ATen's build_unary_op), computed
// by `kRun`.
template <typename Names, void (*kRun)(at::TensorIteratorBase&),
          bool (*kTakes)(at::ScalarType)>
using SameDtype =
    Forms<Pointwise<UnaryLoop<Names, &at::TensorIteratorBase::build_unary_op,
                              kRun, kTakes>>>;
// Float functions (build_unary_float_op) on floating and complex inputs,
// computed by `Stub`'s loop.
template <typename Names, auto& Stub>
using FloatFunction =
    Forms<Pointwise<UnaryLoop<Names,
                              &at::TensorIteratorBase::build_unary_float_op,
                              RunStub<Stub>>>>;

constexpr char kNeg[] = "aten::neg", kNegInPlace[] = "aten::neg_";
constexpr char kAbs[] = "aten::abs", kAbsInPlace[] = "aten::abs_";
constexpr char kSign[] = "aten::sign", kSignInPlace[] = "aten::sign_";
constexpr char kSgn[] = "aten::sgn", kSgnInPlace[] = "aten::sgn_";
constexpr char kExp[] = "aten::exp", kExpInPlace[] = "aten::exp_";
constexpr char kLog[] = "aten::log", kLogInPlace[] = "aten::log_";
constexpr char kLog1p[] = "aten::log1p", kLog1pInPlace[] = "aten::log1p_";
constexpr char kExpm1[] = "aten::expm1", kExpm1InPlace[] = "aten::expm1_";
constexpr char kSqrt[] = "aten::sqrt", kSqrtInPlace[] = "aten::sqrt_";
constexpr char kRsqrt[] = "aten::rsqrt", kRsqrtInPlace[] = "aten::rsqrt_";
constexpr char kReciprocal[] = "aten::reciprocal",
               kReciprocalInPlace[] = "aten::reciprocal_";
constexpr char kSin[] = "aten::sin", kSinInPlace[] = "aten::sin_";
constexpr char kCos[] = "aten::cos", kCosInPlace[] = "aten::cos_";
constexpr char kClamp[] = "aten::clamp", kClampInPlace[] = "aten::clamp_";

using Neg = SameDtype<UnaryNames<kNeg, kNegInPlace>,
                      RunStub<at::native::neg_stub>, NotBool>;
// ATen's CPU abs gives a complex tensor's magnitudes as a real tensor: a
// dtype change, left to the fallback.
using Abs = SameDtype<UnaryNames<kAbs, kAbsInPlace>,
                      RunStub<at::native::abs_stub>, RealNotBool>;
using Sign = SameDtype<UnaryNames<kSign, kSignInPlace>,
                       RunStub<at::native::sign_stub>, Real>;
using Exp = FloatFunction<UnaryNames<kExp, kExpInPlace>, at::native::exp_stub>;
using Log = FloatFunction<UnaryNames<kLog, kLogInPlace>, at::native::log_stub>;
using Log1p =
    FloatFunction<UnaryNames<kLog1p, kLog1pInPlace>, at::native::log1p_stub>;
using Expm1 =
    FloatFunction<UnaryNames<kExpm1, kExpm1InPlace>, at::native::expm1_stub>;
using Sqrt =
    FloatFunction<UnaryNames<kSqrt, kSqrtInPlace>, at::native::sqrt_stub>;
using Rsqrt =
    FloatFunction<UnaryNames<kRsqrt, kRsqrtInPlace>, at::native::rsqrt_stub>;
using Reciprocal = FloatFunction<UnaryNames<kReciprocal, kReciprocalInPlace>,
                                 at::native::reciprocal_stub>;
using Sin = FloatFunction<UnaryNames<kSin, kSinInPlace>, at::native::sin_stub>;
using Cos = FloatFunction<UnaryNames<kCos, kCosInPlace>, at::native::cos_stub>;

// sgn is sign on a real tensor and z / |z| on a complex one, with a loop for
// each, as ATen's CPU kernel picks them.
void RunSgn(at::TensorIteratorBase& iter) {
  if (c10::isComplexType(iter.common_dtype())) {
    at::native::sgn_stub(kCpu, iter);
  } else {
    at::native::sign_stub(kCpu, iter);
  }
}
using Sgn = SameDtype<UnaryNames<kSgn, kSgnInPlace>, RunSgn, NotBool>;

using Bound = std::optional<c10::Scalar>;

// A real bound's NaN test.
bool IsNan(const c10::Scalar& bound) { return std::isnan(bound.toDouble()); }

// clamp(self, min, max) by numbers, either of which may be absent.
struct ClampOp : UnaryNames<kClamp, kClampInPlace> {
  // Taken: a floating tensor, which no bound promotes. Left to the
  // fallback, which raises or computes as ATen's kernel does: no bound at
  // all (an error), and a NaN bound (ATen fills the result with NaN instead
  // of running its loop, which would not). ATen's NaN test converts each
  // bound to double, which raises for a complex bound with an imaginary
  // part; this test raises the same error, at the call.
  static bool Takes(const at::Tensor* out, const at::Tensor& self,
                    const Bound& min, const Bound& max) {
    if (!min.has_value() && !max.has_value()) return false;
    for (const Bound* bound : {&min, &max}) {
      if (bound->has_value() && IsNan(**bound)) return false;
    }
    return LoopTakes({&self}, out, Floating);
  }
  static void Check(const at::Tensor& self, const Bound& min,
                    const Bound& max) {
    for (const Bound* bound : {&min, &max}) {
      if (bound->has_value()) CheckScalarFits(self.scalar_type(), **bound);
    }
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const Bound& /*min*/,
                    const Bound& /*max*/) {
    iter.build_unary_op(out, self);
  }
  static auto Loop(const Bound& min, const Bound& max) {
    return [min, max](at::TensorIteratorBase& it) {
      if (min.has_value() && max.has_value()) {
        at::native::clamp_scalar_stub(kCpu, it, *min, *max);
      } else if (max.has_value()) {
        at::native::clamp_max_scalar_stub(kCpu, it, *max);
      } else {
        at::native::clamp_min_scalar_stub(kCpu, it, *min);
      }
    };
  }
};
using Clamp = Forms<Pointwise<ClampOp>, const Bound&, const Bound&>;

}  // namespace

void RegisterUnaryMathKernels(torch::Library& m) {
  m.impl("neg", TORCH_FN(Neg::Functional));
  m.impl("neg_", TORCH_FN(Neg::InPlace));
  m.impl("neg.out", TORCH_FN(Neg::Out));
  m.impl("abs", TORCH_FN(Abs::Functional));
  m.impl("abs_", TORCH_FN(Abs::InPlace));
  m.impl("abs.out", TORCH_FN(Abs::Out));
  m.impl("sign", TORCH_FN(Sign::Functional));
  m.impl("sign_", TORCH_FN(Sign::InPlace));
  m.impl("sign.out", TORCH_FN(Sign::Out));
  m.impl("sgn", TORCH_FN(Sgn::Functional));
  m.impl("sgn_", TORCH_FN(Sgn::InPlace));
  m.impl("sgn.out", TORCH_FN(Sgn::Out));
  m.impl("exp", TORCH_FN(Exp::Functional));
  m.impl("exp_", TORCH_FN(Exp::InPlace));
  m.impl("exp.out", TORCH_FN(Exp::Out));
  m.impl("log", TORCH_FN(Log::Functional));
  m.impl("log_", TORCH_FN(Log::InPlace));
  m.impl("log.out", TORCH_FN(Log::Out));
  m.impl("log1p", TORCH_FN(Log1p::Functional));
  m.impl("log1p_", TORCH_FN(Log1p::InPlace));
  m.impl("log1p.out", TORCH_FN(Log1p::Out));
  m.impl("expm1", TORCH_FN(Expm1::Functional));
  m.impl("expm1_", TORCH_FN(Expm1::InPlace));
  m.impl("expm1.out", TORCH_FN(Expm1::Out));
  m.impl("sqrt", TORCH_FN(Sqrt::Functional));
  m.impl("sqrt_", TORCH_FN(Sqrt::InPlace));
  m.impl("sqrt.out", TORCH_FN(Sqrt::Out));
  m.impl("rsqrt", TORCH_FN(Rsqrt::Functional));
  m.impl("rsqrt_", TORCH_FN(Rsqrt::InPlace));
  m.impl("rsqrt.out", TORCH_FN(Rsqrt::Out));
  m.impl("reciprocal", TORCH_FN(Reciprocal::Functional));
  m.impl("reciprocal_", TORCH_FN(Reciprocal::InPlace));
  m.impl("reciprocal.out", TORCH_FN(Reciprocal::Out));
  m.impl("sin", TORCH_FN(Sin::Functional));
  m.impl("sin_", TORCH_FN(Sin::InPlace));
  m.impl("sin.out", TORCH_FN(Sin::Out));
  m.impl("cos", TORCH_FN(Cos::Functional));
  m.impl("cos_", TORCH_FN(Cos::InPlace));
  m.impl("cos.out", TORCH_FN(Cos::Out));
  m.impl("clamp", TORCH_FN(Clamp::Functional));
  m.impl("clamp_", TORCH_FN(Clamp::InPlace));
  m.impl("clamp.out", TORCH_FN(Clamp::Out));
}

}  // namespace openreg
