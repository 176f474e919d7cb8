// Pointwise ops besides binary arithmetic, without the CPU fallback's per-call
// bookkeeping: the ones real training steps run most after add/sub/mul/div
// (docs/performance.md, "More ops through TensorIterator"): Adam's update
// (lerp_, addcmul_, addcdiv_, which torch's _foreach_ ops call once per
// parameter on openreg, and sqrt, with the other functions of one tensor in
// unary_math_ops.cc), ReLU and its backward, a power by a number (a squared
// error, and its backward), and fill_/zero_ (gradient buffers, zeros).
//
// Each op builds ATen's TensorIterator over the openreg tensors on the calling
// thread, as the CPU kernel configures it, and enqueues the op's CPU loop
// (core/aten/iterator_loops.h). A call goes to the CPU fallback, exactly as
// if these kernels were not registered, unless all its tensors are plain
// openreg tensors of one dtype the op's loop covers: mixed dtypes would need
// the converted temporaries TensorIterator makes only for the CPU, and a
// dtype outside a loop's dispatch would raise from inside work on the stream.
// For the same reason the scalars a loop converts are checked at the call.
#include <ATen/TensorIterator.h>
#include <ATen/native/Activation.h>
#include <ATen/native/Fill.h>
#include <ATen/native/Lerp.h>
#include <ATen/native/PointwiseOps.h>
#include <ATen/native/Pow.h>
#include <ATen/native/TensorCompare.h>
#include <ATen/ops/pow_compositeexplicitautogradnonfunctional_dispatch.h>
#include <torch/library.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"

namespace openreg {
namespace {

constexpr c10::DeviceType kCpu = c10::DeviceType::CPU;

bool AnyLoopDtype(at::ScalarType /*dtype*/) { return true; }

// Each op below is a Pointwise description (iterator_loops.h). Their
// iterators own their operands (add_owned_*, or ATen's owning build_*
// helpers): the loop runs after the call returned.

// ATen's CPU relu is clamp_min(self, 0). It has no out= overload.
struct ReluNames {
  static constexpr const char* kName = "aten::relu";
  static constexpr Overload kFunctional{"aten::relu", ""};
  static constexpr Overload kInPlace{"aten::relu_", ""};
};
void RunRelu(at::TensorIteratorBase& iter) {
  at::native::clamp_min_scalar_stub(kCpu, iter, 0);
}

// grad_input = self <= threshold ? 0 : grad_output.
struct ThresholdBackwardOp {
  static constexpr const char* kName = "aten::threshold_backward";
  static constexpr Overload kFunctional{"aten::threshold_backward", ""};
  static constexpr Overload kOut{"aten::threshold_backward", "grad_input"};
  static bool Takes(const at::Tensor* out, const at::Tensor& grad_output,
                    const at::Tensor& self, const c10::Scalar& /*threshold*/) {
    return LoopTakes({&grad_output, &self}, out, RealNotBool);
  }
  static void Check(const at::Tensor& grad_output, const at::Tensor& /*self*/,
                    const c10::Scalar& threshold) {
    CheckScalarFits(grad_output.scalar_type(), threshold);
  }
  // The loop selects between its first input (compared) and its second;
  // threshold is idempotent, so ATen allows the output to overlap them.
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& grad_output, const at::Tensor& self,
                    const c10::Scalar& /*threshold*/) {
    at::TensorIteratorConfig config;
    config.set_check_mem_overlap(false)
        .add_owned_output(out)
        .add_owned_const_input(self)
        .add_owned_const_input(grad_output)
        .promote_inputs_to_common_dtype(true)
        .cast_common_dtype_to_outputs(true)
        .enforce_safe_casting_to_output(true);
    iter.build(config);
  }
  static auto Loop(const at::Tensor& /*self*/, const c10::Scalar& threshold) {
    return [threshold](at::TensorIteratorBase& it) {
      at::native::threshold_stub(kCpu, it, threshold, 0);
    };
  }
};

// self + value * tensor1 (*, /) tensor2: addcmul and addcdiv differ only in
// their names, the dtypes their loops take and the loop, which `Variant`
// provides (TakesDtype, Run).
template <typename Variant>
struct AddcOp : Variant {
  static bool Takes(const at::Tensor* out, const at::Tensor& self,
                    const at::Tensor& tensor1, const at::Tensor& tensor2,
                    const c10::Scalar& /*value*/) {
    return LoopTakes({&self, &tensor1, &tensor2}, out, Variant::TakesDtype);
  }
  static void Check(const at::Tensor& self, const at::Tensor& /*tensor1*/,
                    const at::Tensor& /*tensor2*/, const c10::Scalar& value) {
    CheckScalarFits(self.scalar_type(), value);
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const at::Tensor& tensor1,
                    const at::Tensor& tensor2, const c10::Scalar& /*value*/) {
    iter.build_ternary_op(out, self, tensor1, tensor2);
  }
  static auto Loop(const at::Tensor& /*tensor1*/, const at::Tensor& /*tensor2*/,
                   const c10::Scalar& value) {
    return [value](at::TensorIteratorBase& it) { Variant::Run(it, value); };
  }
};

struct AddcmulVariant {
  static constexpr const char* kName = "aten::addcmul";
  static constexpr Overload kFunctional{"aten::addcmul", ""};
  static constexpr Overload kInPlace{"aten::addcmul_", ""};
  static constexpr Overload kOut{"aten::addcmul", "out"};
  static bool TakesDtype(at::ScalarType dtype) { return NotBool(dtype); }
  static void Run(at::TensorIteratorBase& it, const c10::Scalar& value) {
    at::native::addcmul_stub(kCpu, it, value);
  }
};

// Integer tensors are ATen's error, which the fallback raises.
struct AddcdivVariant {
  static constexpr const char* kName = "aten::addcdiv";
  static constexpr Overload kFunctional{"aten::addcdiv", ""};
  static constexpr Overload kInPlace{"aten::addcdiv_", ""};
  static constexpr Overload kOut{"aten::addcdiv", "out"};
  static bool TakesDtype(at::ScalarType dtype) {
    return FloatingOrComplex(dtype);
  }
  static void Run(at::TensorIteratorBase& it, const c10::Scalar& value) {
    at::native::addcdiv_stub(kCpu, it, value);
  }
};

// self + weight * (end - self), weight a number.
struct LerpOp {
  static constexpr const char* kName = "aten::lerp";
  static constexpr Overload kFunctional{"aten::lerp", "Scalar"};
  static constexpr Overload kInPlace{"aten::lerp_", "Scalar"};
  static constexpr Overload kOut{"aten::lerp", "Scalar_out"};
  static bool Takes(const at::Tensor* out, const at::Tensor& self,
                    const at::Tensor& end, const c10::Scalar& /*weight*/) {
    return LoopTakes({&self, &end}, out, FloatingOrComplex);
  }
  static void Check(const at::Tensor& self, const at::Tensor& /*end*/,
                    const c10::Scalar& weight) {
    CheckScalarFits(self.scalar_type(), weight);
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const at::Tensor& end,
                    const c10::Scalar& /*weight*/) {
    iter.build_binary_op(out, self, end);
  }
  static auto Loop(const at::Tensor& /*end*/, const c10::Scalar& weight) {
    return [weight](at::TensorIteratorBase& it) {
      at::native::lerp_kernel_scalar_weight(kCpu, it, weight);
    };
  }
};

// Copies a unary iterator's input into its output, bit for bit: what ATen's
// pow computes for the exponent 1 (it copies). Overlap is ATen's to refuse
// at the build, except an in-place call's, where out and in are the same
// memory; memmove is defined for that.
void CopyInputToOutput(at::TensorIteratorBase& iter) {
  const int64_t element_size = iter.element_size(0);
  iter.for_each([element_size](char** data, const int64_t* strides,
                               int64_t inner_size, int64_t outer_size) {
    // strides: the output's and the input's inner strides, then their
    // outer ones.
    for (int64_t outer = 0; outer < outer_size; ++outer) {
      char* out = data[0] + outer * strides[2];
      const char* in = data[1] + outer * strides[3];
      if (strides[0] == element_size && strides[1] == element_size) {
        std::memmove(out, in, inner_size * element_size);
        continue;
      }
      for (int64_t i = 0; i < inner_size; ++i) {
        std::memmove(out + i * strides[0], in + i * strides[1], element_size);
      }
    }
  });
}

// self ** exponent, the exponent a number: x ** 2 in a squared error, and
// self ** 1 in its backward. ATen's CPU kernel fills with ones for the
// exponent 0, copies self for 1 and runs its pow loop otherwise. The loop
// takes floating and complex tensors whose result keeps their dtype (not a
// real tensor to a complex power). Integer tensors stay on the fallback: their
// loop converts the exponent with an overflow check and ATen refuses negative
// integer powers of them. So do booleans and symbolic numbers as exponents,
// and the exponent 0, whose fill is a loop over the output alone.
struct PowOp {
  static constexpr const char* kName = "aten::pow";
  static constexpr Overload kFunctional{"aten::pow", "Tensor_Scalar"};
  static constexpr Overload kInPlace{"aten::pow_", "Scalar"};
  static constexpr Overload kOut{"aten::pow", "Tensor_Scalar_out"};
  static bool Takes(const at::Tensor* out, const at::Tensor& self,
                    const c10::Scalar& exponent) {
    if (exponent.isBoolean() || exponent.isSymbolic()) return false;
    if (exponent.isComplex() && !self.is_complex()) return false;
    return !exponent.equal(0.0) && LoopTakes({&self}, out, FloatingOrComplex);
  }
  static void Check(const at::Tensor& /*self*/,
                    const c10::Scalar& /*exponent*/) {}
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const c10::Scalar& /*exponent*/) {
    iter.build_unary_op(out, self);
  }
  // The fallback sizes a functional call's result with the op's Meta kernel,
  // and pow's (PyTorch's Python reference) gives a bool tensor to a bool
  // power int64 where the CPU gives bool. ATen's structured wrapper, which
  // ran every functional pow before this loop, sizes it with ATen's own meta
  // function and computes through pow's out= form, which comes back to Out.
  static at::Tensor FunctionalFallback(const at::Tensor& self,
                                       const c10::Scalar& exponent) {
    return at::compositeexplicitautogradnonfunctional::pow(self, exponent);
  }
  static auto Loop(const c10::Scalar& exponent) {
    const bool copies = exponent.equal(1.0);
    return [exponent, copies](at::TensorIteratorBase& it) {
      if (copies) {
        CopyInputToOutput(it);
      } else {
        at::native::pow_tensor_scalar_stub(kCpu, it, exponent);
      }
    };
  }
};

// Fills `self` with a number; ATen's fill allows a self-overlapping tensor
// (an expanded one) and never resizes it.
struct FillOp {
  static constexpr const char* kName = "aten::fill_";
  static constexpr Overload kInPlace{"aten::fill_", "Scalar"};
  static bool Takes(const at::Tensor* out, const at::Tensor& /*self*/,
                    const c10::Scalar& /*value*/) {
    return LoopTakes({out}, nullptr, AnyLoopDtype);
  }
  static void Check(const at::Tensor& self, const c10::Scalar& value) {
    CheckScalarFits(self.scalar_type(), value);
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& /*self*/, const c10::Scalar& /*value*/) {
    at::TensorIteratorConfig config;
    config.set_check_mem_overlap(false)
        .add_owned_output(out)
        .resize_outputs(false)
        .check_all_same_dtype(false);
    iter.build(config);
  }
  static auto Loop(const c10::Scalar& value) {
    return [value](at::TensorIterator& it) {
      at::native::fill_stub(kCpu, it, value);
    };
  }
};

using Relu = Forms<Pointwise<UnaryLoop<
    ReluNames, &at::TensorIteratorBase::build_unary_op, RunRelu, RealNotBool>>>;
using ThresholdBackward = Forms<Pointwise<ThresholdBackwardOp>,
                                const at::Tensor&, const c10::Scalar&>;
using Addcmul = Forms<Pointwise<AddcOp<AddcmulVariant>>, const at::Tensor&,
                      const at::Tensor&, const c10::Scalar&>;
using Addcdiv = Forms<Pointwise<AddcOp<AddcdivVariant>>, const at::Tensor&,
                      const at::Tensor&, const c10::Scalar&>;
using Lerp = Forms<Pointwise<LerpOp>, const at::Tensor&, const c10::Scalar&>;
using Pow = Forms<Pointwise<PowOp>, const c10::Scalar&>;
using Fill = Forms<Pointwise<FillOp>, const c10::Scalar&>;

// ATen's zero_ is fill_ with 0 outside the CPU.
at::Tensor& Zero(at::Tensor& self) { return Fill::InPlace(self, 0); }

}  // namespace

void RegisterPointwiseKernels(torch::Library& m) {
  m.impl("relu", TORCH_FN(Relu::Functional));
  m.impl("relu_", TORCH_FN(Relu::InPlace));
  m.impl("threshold_backward", TORCH_FN(ThresholdBackward::Functional));
  m.impl("threshold_backward.grad_input", TORCH_FN(ThresholdBackward::Out));
  m.impl("addcmul", TORCH_FN(Addcmul::Functional));
  m.impl("addcmul_", TORCH_FN(Addcmul::InPlace));
  m.impl("addcmul.out", TORCH_FN(Addcmul::Out));
  m.impl("addcdiv", TORCH_FN(Addcdiv::Functional));
  m.impl("addcdiv_", TORCH_FN(Addcdiv::InPlace));
  m.impl("addcdiv.out", TORCH_FN(Addcdiv::Out));
  m.impl("lerp.Scalar", TORCH_FN(Lerp::Functional));
  m.impl("lerp_.Scalar", TORCH_FN(Lerp::InPlace));
  m.impl("lerp.Scalar_out", TORCH_FN(Lerp::Out));
  m.impl("pow.Tensor_Scalar", TORCH_FN(Pow::Functional));
  m.impl("pow_.Scalar", TORCH_FN(Pow::InPlace));
  m.impl("pow.Tensor_Scalar_out", TORCH_FN(Pow::Out));
  m.impl("fill_.Scalar", TORCH_FN(Fill::InPlace));
  m.impl("zero_", TORCH_FN(Zero));
}

}  // namespace openreg
