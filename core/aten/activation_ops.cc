// Activations and their gradients without the CPU fallback: sigmoid, tanh,
// SiLU and GELU, the nonlinearities of recurrent cells, gates and
// transformers besides ReLU (pointwise_ops.cc), and leaky ReLU, ELU and
// softplus. On the fallback a small
// activation cost 1.2–1.8× the CPU's time, the fallback's per-call
// bookkeeping (docs/performance.md, "Activations off the fallback").
//
// Each is a Pointwise description (iterator_loops.h): the calling thread
// builds ATen's TensorIterator as the CPU kernel's meta function does, and
// the stream runs the op's CPU loop. Calls the loops do not take (integer
// inputs, which sigmoid and tanh promote to float; half and bfloat16; mixed
// dtypes; lazily conjugated tensors) go to the CPU fallback, exactly as if
// these kernels were not registered. The numbers the loops convert are
// checked at the call, as ATen's loops would check them on the stream.
#include <ATen/Context.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/Activation.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/Gelu.h>
#include <ATen/native/UnaryOps.h>
#include <torch/library.h>

#include <string_view>

#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"

namespace openreg {
namespace {

constexpr c10::DeviceType kCpu = c10::DeviceType::CPU;

// The gradient of an activation of one tensor: `Stub` on grad_output and the
// forward's output (sigmoid, tanh) or input (SiLU), as ATen's
// build_borrowing_binary_op builds them.
template <typename Names, auto& Stub>
struct ActivationBackward : Names {
  static bool Takes(const at::Tensor* out, const at::Tensor& grad_output,
                    const at::Tensor& saved) {
    return LoopTakes({&grad_output, &saved}, out, FloatingOrComplex);
  }
  static void Check(const at::Tensor& /*grad_output*/,
                    const at::Tensor& /*saved*/) {}
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& grad_output, const at::Tensor& saved) {
    iter.build_binary_op(out, grad_output, saved);
  }
  static auto Loop(const at::Tensor& /*saved*/) {
    return [](at::TensorIteratorBase& it) { Stub(kCpu, it); };
  }
};

constexpr char kSigmoid[] = "aten::sigmoid", kSigmoidInPlace[] = "aten::sigmoid_";
constexpr char kTanh[] = "aten::tanh", kTanhInPlace[] = "aten::tanh_";
constexpr char kSilu[] = "aten::silu", kSiluInPlace[] = "aten::silu_";
struct SigmoidBackwardNames {
  static constexpr const char* kName = "aten::sigmoid_backward";
  static constexpr Overload kFunctional{"aten::sigmoid_backward", ""};
  static constexpr Overload kOut{"aten::sigmoid_backward", "grad_input"};
};
struct TanhBackwardNames {
  static constexpr const char* kName = "aten::tanh_backward";
  static constexpr Overload kFunctional{"aten::tanh_backward", ""};
  static constexpr Overload kOut{"aten::tanh_backward", "grad_input"};
};
struct SiluBackwardNames {
  static constexpr const char* kName = "aten::silu_backward";
  static constexpr Overload kFunctional{"aten::silu_backward", ""};
  static constexpr Overload kOut{"aten::silu_backward", "grad_input"};
};

// Note [GELU's two CPU kernels]
// ATen's CPU gelu and gelu_backward compute the exact form ("none") of a
// contiguous float or bfloat16 tensor of more than one element with oneDNN
// when oneDNN is enabled (torch.backends.mkldnn.enabled, the default), and
// on ARM the tanh form too; everything else with their own loop. The two
// differ in the last bits, so the loop here takes only the calls ATen
// computes with its loop, and oneDNN's stay on the fallback, which runs
// ATen's CPU kernel itself. `input` is the forward's input, whose layout
// decides in the backward too.
bool CpuGeluRunsItsLoop(const at::Tensor& input,
                        at::native::GeluType type) {
#if defined(__aarch64__)
  const bool onednn_form = true;
#else
  const bool onednn_form = type == at::native::GeluType::None;
#endif
  const bool onednn_dtype = input.scalar_type() == at::kFloat ||
                            input.scalar_type() == at::kBFloat16;
  return !(onednn_form && onednn_dtype &&
           at::globalContext().userEnabledMkldnn() && input.is_contiguous() &&
           input.numel() > 1);
}

// Whether the loop takes a GELU call on `input` with `approximate`. An
// unknown form is ATen's error, which the fallback raises where the CPU
// kernel does (after the iterator's own checks).
bool GeluTakes(const at::Tensor& input, std::string_view approximate) {
  if (approximate != "none" && approximate != "tanh") return false;
  return CpuGeluRunsItsLoop(input,
                            at::native::get_gelutype_enum(approximate));
}

struct GeluOp {
  static constexpr const char* kName = "aten::gelu";
  static constexpr Overload kFunctional{"aten::gelu", ""};
  static constexpr Overload kInPlace{"aten::gelu_", ""};
  static constexpr Overload kOut{"aten::gelu", "out"};
  static bool Takes(const at::Tensor* out, const at::Tensor& self,
                    std::string_view approximate) {
    return GeluTakes(self, approximate) && LoopTakes({&self}, out, Floating);
  }
  static void Check(const at::Tensor& /*self*/,
                    std::string_view /*approximate*/) {}
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, std::string_view /*approximate*/) {
    iter.build_unary_op(out, self);
  }
  static auto Loop(std::string_view approximate) {
    const at::native::GeluType type =
        at::native::get_gelutype_enum(approximate);
    return [type](at::TensorIteratorBase& it) {
      at::native::GeluKernel(kCpu, it, type);
    };
  }
};

struct GeluBackwardOp {
  static constexpr const char* kName = "aten::gelu_backward";
  static constexpr Overload kFunctional{"aten::gelu_backward", ""};
  static constexpr Overload kOut{"aten::gelu_backward", "grad_input"};
  static bool Takes(const at::Tensor* out, const at::Tensor& grad_output,
                    const at::Tensor& self, std::string_view approximate) {
    return GeluTakes(self, approximate) &&
           LoopTakes({&grad_output, &self}, out, Floating);
  }
  static void Check(const at::Tensor& /*grad_output*/,
                    const at::Tensor& /*self*/,
                    std::string_view /*approximate*/) {}
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& grad_output, const at::Tensor& self,
                    std::string_view /*approximate*/) {
    iter.build_binary_op(out, grad_output, self);
  }
  static auto Loop(const at::Tensor& /*self*/, std::string_view approximate) {
    const at::native::GeluType type =
        at::native::get_gelutype_enum(approximate);
    return [type](at::TensorIteratorBase& it) {
      at::native::GeluBackwardKernel(kCpu, it, type);
    };
  }
};

// x if x > 0 else negative_slope * x; ATen's loops are for floating tensors.
struct LeakyReluOp {
  static constexpr const char* kName = "aten::leaky_relu";
  static constexpr Overload kFunctional{"aten::leaky_relu", ""};
  static constexpr Overload kInPlace{"aten::leaky_relu_", ""};
  static constexpr Overload kOut{"aten::leaky_relu", "out"};
  static bool Takes(const at::Tensor* out, const at::Tensor& self,
                    const c10::Scalar& /*negative_slope*/) {
    return LoopTakes({&self}, out, Floating);
  }
  static void Check(const at::Tensor& self,
                    const c10::Scalar& negative_slope) {
    CheckScalarFits(self.scalar_type(), negative_slope);
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self,
                    const c10::Scalar& /*negative_slope*/) {
    iter.build_unary_op(out, self);
  }
  static auto Loop(const c10::Scalar& negative_slope) {
    return [negative_slope](at::TensorIteratorBase& it) {
      at::native::leaky_relu_stub(kCpu, it, negative_slope);
    };
  }
};

// The iterator reads the forward's input (or output, after an in-place
// forward) first, then grad_output. ATen refuses a negative slope after an
// in-place forward; the fallback raises that error as the CPU does.
struct LeakyReluBackwardOp {
  static constexpr const char* kName = "aten::leaky_relu_backward";
  static constexpr Overload kFunctional{"aten::leaky_relu_backward", ""};
  static constexpr Overload kOut{"aten::leaky_relu_backward", "grad_input"};
  static bool Takes(const at::Tensor* out, const at::Tensor& grad_output,
                    const at::Tensor& self_or_result,
                    const c10::Scalar& negative_slope, bool self_is_result) {
    if (self_is_result && negative_slope.to<double>() < 0) return false;
    return LoopTakes({&grad_output, &self_or_result}, out, Floating);
  }
  static void Check(const at::Tensor& grad_output,
                    const at::Tensor& /*self_or_result*/,
                    const c10::Scalar& negative_slope,
                    bool /*self_is_result*/) {
    CheckScalarFits(grad_output.scalar_type(), negative_slope);
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& grad_output,
                    const at::Tensor& self_or_result,
                    const c10::Scalar& /*negative_slope*/,
                    bool /*self_is_result*/) {
    iter.build_binary_op(out, self_or_result, grad_output);
  }
  static auto Loop(const at::Tensor& /*self_or_result*/,
                   const c10::Scalar& negative_slope,
                   bool /*self_is_result*/) {
    return [negative_slope](at::TensorIteratorBase& it) {
      at::native::leaky_relu_backward_stub(kCpu, it, negative_slope);
    };
  }
};

// scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1)).
struct EluOp {
  static constexpr const char* kName = "aten::elu";
  static constexpr Overload kFunctional{"aten::elu", ""};
  static constexpr Overload kInPlace{"aten::elu_", ""};
  static constexpr Overload kOut{"aten::elu", "out"};
  static bool Takes(const at::Tensor* out, const at::Tensor& self,
                    const c10::Scalar& /*alpha*/, const c10::Scalar& /*scale*/,
                    const c10::Scalar& /*input_scale*/) {
    return LoopTakes({&self}, out, Floating);
  }
  static void Check(const at::Tensor& self, const c10::Scalar& alpha,
                    const c10::Scalar& scale, const c10::Scalar& input_scale) {
    for (const c10::Scalar* number : {&alpha, &scale, &input_scale}) {
      CheckScalarFits(self.scalar_type(), *number);
    }
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const c10::Scalar& /*alpha*/,
                    const c10::Scalar& /*scale*/,
                    const c10::Scalar& /*input_scale*/) {
    iter.build_unary_op(out, self);
  }
  static auto Loop(const c10::Scalar& alpha, const c10::Scalar& scale,
                   const c10::Scalar& input_scale) {
    return [alpha, scale, input_scale](at::TensorIteratorBase& it) {
      at::native::elu_stub(kCpu, it, alpha, scale, input_scale);
    };
  }
};

// ELU's gradient from its input, or from its output after an in-place
// forward, which ATen refuses with a negative alpha (the fallback raises it).
struct EluBackwardOp {
  static constexpr const char* kName = "aten::elu_backward";
  static constexpr Overload kFunctional{"aten::elu_backward", ""};
  static constexpr Overload kOut{"aten::elu_backward", "grad_input"};
  static bool Takes(const at::Tensor* out, const at::Tensor& grad_output,
                    const c10::Scalar& alpha, const c10::Scalar& /*scale*/,
                    const c10::Scalar& /*input_scale*/, bool is_result,
                    const at::Tensor& self_or_result) {
    if (is_result && alpha.to<double>() < 0) return false;
    return LoopTakes({&grad_output, &self_or_result}, out, Floating);
  }
  static void Check(const at::Tensor& grad_output, const c10::Scalar& alpha,
                    const c10::Scalar& scale, const c10::Scalar& input_scale,
                    bool /*is_result*/, const at::Tensor& /*self_or_result*/) {
    for (const c10::Scalar* number : {&alpha, &scale, &input_scale}) {
      CheckScalarFits(grad_output.scalar_type(), *number);
    }
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& grad_output,
                    const c10::Scalar& /*alpha*/, const c10::Scalar& /*scale*/,
                    const c10::Scalar& /*input_scale*/, bool /*is_result*/,
                    const at::Tensor& self_or_result) {
    iter.build_binary_op(out, grad_output, self_or_result);
  }
  static auto Loop(const c10::Scalar& alpha, const c10::Scalar& scale,
                   const c10::Scalar& input_scale, bool is_result,
                   const at::Tensor& /*self_or_result*/) {
    return [alpha, scale, input_scale, is_result](at::TensorIteratorBase& it) {
      at::native::elu_backward_stub(kCpu, it, alpha, scale, input_scale,
                                    is_result);
    };
  }
};

// log(1 + exp(beta * x)) / beta, x itself above threshold; no in-place form.
struct SoftplusOp {
  static constexpr const char* kName = "aten::softplus";
  static constexpr Overload kFunctional{"aten::softplus", ""};
  static constexpr Overload kOut{"aten::softplus", "out"};
  static bool Takes(const at::Tensor* out, const at::Tensor& self,
                    const c10::Scalar& /*beta*/,
                    const c10::Scalar& /*threshold*/) {
    return LoopTakes({&self}, out, Floating);
  }
  static void Check(const at::Tensor& self, const c10::Scalar& beta,
                    const c10::Scalar& threshold) {
    CheckScalarFits(self.scalar_type(), beta);
    CheckScalarFits(self.scalar_type(), threshold);
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self, const c10::Scalar& /*beta*/,
                    const c10::Scalar& /*threshold*/) {
    iter.build_unary_op(out, self);
  }
  static auto Loop(const c10::Scalar& beta, const c10::Scalar& threshold) {
    return [beta, threshold](at::TensorIteratorBase& it) {
      at::native::softplus_stub(kCpu, it, beta, threshold);
    };
  }
};

struct SoftplusBackwardOp {
  static constexpr const char* kName = "aten::softplus_backward";
  static constexpr Overload kFunctional{"aten::softplus_backward", ""};
  static constexpr Overload kOut{"aten::softplus_backward", "grad_input"};
  static bool Takes(const at::Tensor* out, const at::Tensor& grad_output,
                    const at::Tensor& self, const c10::Scalar& /*beta*/,
                    const c10::Scalar& /*threshold*/) {
    return LoopTakes({&grad_output, &self}, out, Floating);
  }
  static void Check(const at::Tensor& grad_output, const at::Tensor& /*self*/,
                    const c10::Scalar& beta, const c10::Scalar& threshold) {
    CheckScalarFits(grad_output.scalar_type(), beta);
    CheckScalarFits(grad_output.scalar_type(), threshold);
  }
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& grad_output, const at::Tensor& self,
                    const c10::Scalar& /*beta*/,
                    const c10::Scalar& /*threshold*/) {
    iter.build_binary_op(out, grad_output, self);
  }
  static auto Loop(const at::Tensor& /*self*/, const c10::Scalar& beta,
                   const c10::Scalar& threshold) {
    return [beta, threshold](at::TensorIteratorBase& it) {
      at::native::softplus_backward_stub(kCpu, it, beta, threshold);
    };
  }
};

// sigmoid and tanh are float ops (ATen's build_unary_float_op), SiLU keeps
// its input's dtype (build_unary_op); all run on floating and complex
// tensors.
using Sigmoid = Forms<Pointwise<
    UnaryLoop<UnaryNames<kSigmoid, kSigmoidInPlace>,
              &at::TensorIteratorBase::build_unary_float_op,
              RunStub<at::native::sigmoid_stub>>>>;
using Tanh =
    Forms<Pointwise<UnaryLoop<UnaryNames<kTanh, kTanhInPlace>,
                              &at::TensorIteratorBase::build_unary_float_op,
                              RunStub<at::native::tanh_stub>>>>;
using Silu = Forms<Pointwise<UnaryLoop<UnaryNames<kSilu, kSiluInPlace>,
                                       &at::TensorIteratorBase::build_unary_op,
                                       RunStub<at::native::silu_stub>>>>;
using SigmoidBackward =
    Forms<Pointwise<ActivationBackward<SigmoidBackwardNames,
                                       at::native::sigmoid_backward_stub>>,
          const at::Tensor&>;
using TanhBackward =
    Forms<Pointwise<ActivationBackward<TanhBackwardNames,
                                       at::native::tanh_backward_stub>>,
          const at::Tensor&>;
using SiluBackward =
    Forms<Pointwise<ActivationBackward<SiluBackwardNames,
                                       at::native::silu_backward_stub>>,
          const at::Tensor&>;
using Gelu = Forms<Pointwise<GeluOp>, std::string_view>;
using LeakyRelu = Forms<Pointwise<LeakyReluOp>, const c10::Scalar&>;
using LeakyReluBackward = Forms<Pointwise<LeakyReluBackwardOp>,
                                const at::Tensor&, const c10::Scalar&, bool>;
using Elu = Forms<Pointwise<EluOp>, const c10::Scalar&, const c10::Scalar&,
                  const c10::Scalar&>;
using EluBackward =
    Forms<Pointwise<EluBackwardOp>, const c10::Scalar&, const c10::Scalar&,
          const c10::Scalar&, bool, const at::Tensor&>;
using Softplus =
    Forms<Pointwise<SoftplusOp>, const c10::Scalar&, const c10::Scalar&>;
using SoftplusBackward = Forms<Pointwise<SoftplusBackwardOp>, const at::Tensor&,
                               const c10::Scalar&, const c10::Scalar&>;
using GeluBackward =
    Forms<Pointwise<GeluBackwardOp>, const at::Tensor&, std::string_view>;

}  // namespace

void RegisterActivationKernels(torch::Library& m) {
  m.impl("sigmoid", TORCH_FN(Sigmoid::Functional));
  m.impl("sigmoid_", TORCH_FN(Sigmoid::InPlace));
  m.impl("sigmoid.out", TORCH_FN(Sigmoid::Out));
  m.impl("sigmoid_backward", TORCH_FN(SigmoidBackward::Functional));
  m.impl("sigmoid_backward.grad_input", TORCH_FN(SigmoidBackward::Out));
  m.impl("tanh", TORCH_FN(Tanh::Functional));
  m.impl("tanh_", TORCH_FN(Tanh::InPlace));
  m.impl("tanh.out", TORCH_FN(Tanh::Out));
  m.impl("tanh_backward", TORCH_FN(TanhBackward::Functional));
  m.impl("tanh_backward.grad_input", TORCH_FN(TanhBackward::Out));
  m.impl("silu", TORCH_FN(Silu::Functional));
  m.impl("silu_", TORCH_FN(Silu::InPlace));
  m.impl("silu.out", TORCH_FN(Silu::Out));
  m.impl("silu_backward", TORCH_FN(SiluBackward::Functional));
  m.impl("silu_backward.grad_input", TORCH_FN(SiluBackward::Out));
  m.impl("gelu", TORCH_FN(Gelu::Functional));
  m.impl("gelu_", TORCH_FN(Gelu::InPlace));
  m.impl("gelu.out", TORCH_FN(Gelu::Out));
  m.impl("gelu_backward", TORCH_FN(GeluBackward::Functional));
  m.impl("gelu_backward.grad_input", TORCH_FN(GeluBackward::Out));
  m.impl("leaky_relu", TORCH_FN(LeakyRelu::Functional));
  m.impl("leaky_relu_", TORCH_FN(LeakyRelu::InPlace));
  m.impl("leaky_relu.out", TORCH_FN(LeakyRelu::Out));
  m.impl("leaky_relu_backward", TORCH_FN(LeakyReluBackward::Functional));
  m.impl("leaky_relu_backward.grad_input", TORCH_FN(LeakyReluBackward::Out));
  m.impl("elu", TORCH_FN(Elu::Functional));
  m.impl("elu_", TORCH_FN(Elu::InPlace));
  m.impl("elu.out", TORCH_FN(Elu::Out));
  m.impl("elu_backward", TORCH_FN(EluBackward::Functional));
  m.impl("elu_backward.grad_input", TORCH_FN(EluBackward::Out));
  m.impl("softplus", TORCH_FN(Softplus::Functional));
  m.impl("softplus.out", TORCH_FN(Softplus::Out));
  m.impl("softplus_backward", TORCH_FN(SoftplusBackward::Functional));
  m.impl("softplus_backward.grad_input", TORCH_FN(SoftplusBackward::Out));
}

}  // namespace openreg
