// Softmax, log-softmax and the negative log-likelihood loss (forward and
// backward) without the CPU fallback: cross entropy, the loss of every
// classifier, is log_softmax followed by nll_loss. On the fallback these ops
// sized their results with PyTorch's Python meta functions, most of the
// instructions of a fresh process's first training step (docs/performance.md,
// "Losses off the fallback"), and the fallback's bookkeeping in every step.
//
// All are structured ops: ATen's C++ meta function checks the arguments and
// sizes the results at the call, raising the CPU's errors there, and the
// stream runs ATen's CPU implementation on CPU aliases
// (core/aten/structured_calls.h). What the implementation finds only in the
// values (a target index out of range) it raises inside work on the stream,
// as the fallback did (by the next synchronization, or at the op under
// OPENREG_LAUNCH_BLOCKING=1).
//
// A call goes to the CPU fallback, exactly as if these kernels were not
// registered, unless its floating tensors are plain openreg tensors on one
// device of one real floating dtype (the CPU implementations dispatch on
// float, double, half and bfloat16; a complex call's error then comes from
// the fallback as before) and its targets int64 openreg tensors there: the
// CPU's results and errors for other targets (uint8 is taken by the CPU
// kernel, others are refused) stay the fallback's. half_to_float also goes
// there: the CPU implementation refuses it.
#include <ATen/ops/_log_softmax_backward_data_native.h>
#include <ATen/ops/_log_softmax_native.h>
#include <ATen/ops/_softmax_backward_data_native.h>
#include <ATen/ops/_softmax_native.h>
#include <ATen/ops/nll_loss_backward_native.h>
#include <ATen/ops/nll_loss_forward_native.h>
#include <torch/library.h>

#include <initializer_list>
#include <optional>
#include <tuple>

#include "core/aten/argument_devices.h"
#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"
#include "core/aten/structured_arguments.h"
#include "core/aten/structured_calls.h"

namespace openreg {
namespace {

// StructuredTakes for the tensors of a softmax or loss call, which must also
// be real: the CPU implementations have no complex kernels.
bool TakesReal(std::initializer_list<const at::Tensor*> inputs,
               const at::Tensor* out) {
  return at::isFloatingType((*inputs.begin())->scalar_type()) &&
         StructuredTakes(inputs, out);
}

// Class indices the CPU implementation reads as int64, on `like`'s device.
bool TakesTarget(const at::Tensor& target, const at::Tensor& like) {
  return IsOpenReg(target) && target.device() == like.device() &&
         target.scalar_type() == at::kLong;
}

// The weights as the meta and impl functions take them.
at::OptionalTensorRef WeightRef(const std::optional<at::Tensor>& weight) {
  if (!weight.has_value() || !weight->defined()) return {};
  return at::OptionalTensorRef(*weight);
}

// Whether a loss call's tensors can run the CPU implementation: `self` and
// `more` (the total weight, for the backward) as TakesReal takes them, and
// the class weights on their device. Weights of another dtype are taken too:
// the CPU implementation raises the CPU's error for them ("expected scalar
// type Float but found Double"), where the fallback's out= kernel would
// raise its own about the output's dtype.
bool TakesLoss(const at::Tensor& self, const std::optional<at::Tensor>& weight,
               const at::Tensor* more, int64_t reduction) {
  // Mean, sum and none (at::Reduction); the CPU implementation reads
  // anything else as one of them, and the fallback keeps that reading.
  if (reduction < 0 || reduction > 2) return false;
  if (weight.has_value() && weight->defined() &&
      !PlainOpenRegOn(self.device(), {&*weight})) {
    return false;
  }
  if (more != nullptr) return TakesReal({&self, more}, nullptr);
  return TakesReal({&self}, nullptr);
}

OutputKind KindOf(const at::Tensor* out) {
  return out == nullptr ? OutputKind::kFresh : OutputKind::kOut;
}

// _softmax and _log_softmax: (self, dim, half_to_float), with `Impl` ATen's
// structured CPU kernel of the op named `kName`.
template <typename Impl, const char* kName>
struct SoftmaxOp {
  static constexpr Overload kFunctional{kName, ""};
  static constexpr Overload kOut{kName, "out"};
  static std::optional<at::Tensor> Enqueue(const at::Tensor& self,
                                           const at::Tensor* out, int64_t dim,
                                           bool half_to_float) {
    if (half_to_float || !TakesReal({&self}, out)) return std::nullopt;
    StructuredCall<Impl> call(KindOf(out), out);
    call.meta(self, dim, half_to_float);
    if (!call.accepted()) return std::nullopt;
    call.Enqueue(kName, self, dim, half_to_float);
    return call.output();
  }
};

// Their backward ops: (grad_output, output, dim, input_dtype).
template <typename Impl, const char* kName>
struct SoftmaxBackwardOp {
  static constexpr Overload kFunctional{kName, ""};
  static constexpr Overload kOut{kName, "out"};
  static std::optional<at::Tensor> Enqueue(const at::Tensor& grad_output,
                                           const at::Tensor* out,
                                           const at::Tensor& output,
                                           int64_t dim,
                                           at::ScalarType input_dtype) {
    if (!TakesReal({&grad_output, &output}, out)) return std::nullopt;
    StructuredCall<Impl> call(KindOf(out), out);
    call.meta(grad_output, output, dim, input_dtype);
    if (!call.accepted()) return std::nullopt;
    call.Enqueue(kName, grad_output, output, dim, input_dtype);
    return call.output();
  }
};

constexpr char kSoftmaxName[] = "aten::_softmax";
constexpr char kLogSoftmaxName[] = "aten::_log_softmax";
constexpr char kSoftmaxBackwardName[] = "aten::_softmax_backward_data";
constexpr char kLogSoftmaxBackwardName[] = "aten::_log_softmax_backward_data";
using Softmax = SoftmaxOp<at::native::structured_softmax_cpu_out, kSoftmaxName>;
using LogSoftmax =
    SoftmaxOp<at::native::structured_log_softmax_cpu_out, kLogSoftmaxName>;
using SoftmaxBackward =
    SoftmaxBackwardOp<at::native::structured_softmax_backward_cpu_out,
                      kSoftmaxBackwardName>;
using LogSoftmaxBackward =
    SoftmaxBackwardOp<at::native::structured_log_softmax_backward_cpu_out,
                      kLogSoftmaxBackwardName>;

struct NllLossBackward {
  static constexpr Overload kFunctional{"aten::nll_loss_backward", ""};
  static constexpr Overload kOut{"aten::nll_loss_backward", "grad_input"};
  static std::optional<at::Tensor> Enqueue(
      const at::Tensor& grad_output, const at::Tensor* out,
      const at::Tensor& self, const at::Tensor& target,
      const std::optional<at::Tensor>& weight, int64_t reduction,
      int64_t ignore_index, const at::Tensor& total_weight) {
    if (!TakesLoss(self, weight, &total_weight, reduction) ||
        !TakesReal({&self, &grad_output}, out) || !TakesTarget(target, self)) {
      return std::nullopt;
    }
    StructuredCall<at::native::structured_nll_loss_backward_out_cpu> call(
        KindOf(out), out);
    call.meta(grad_output, self, target, WeightRef(weight), reduction,
              ignore_index, total_weight);
    if (!call.accepted()) return std::nullopt;
    call.Enqueue("aten::nll_loss_backward", grad_output, self, target,
                 WeightRef(weight), reduction, ignore_index, total_weight);
    return call.output();
  }
};

using SoftmaxForms = Forms<Softmax, int64_t, bool>;
using LogSoftmaxForms = Forms<LogSoftmax, int64_t, bool>;
using SoftmaxBackwardForms =
    Forms<SoftmaxBackward, const at::Tensor&, int64_t, at::ScalarType>;
using LogSoftmaxBackwardForms =
    Forms<LogSoftmaxBackward, const at::Tensor&, int64_t, at::ScalarType>;
using NllLossBackwardForms =
    Forms<NllLossBackward, const at::Tensor&, const at::Tensor&,
          const std::optional<at::Tensor>&, int64_t, int64_t,
          const at::Tensor&>;

// nll_loss_forward returns the loss and the total weight of the counted
// targets, which its backward divides by for the mean.
std::tuple<at::Tensor, at::Tensor> NllLossForward(
    const at::Tensor& self, const at::Tensor& target,
    const std::optional<at::Tensor>& weight, int64_t reduction,
    int64_t ignore_index) {
  using Impl = at::native::structured_nll_loss_forward_out_cpu;
  static const c10::OperatorHandle op = Op("aten::nll_loss_forward", "");
  return TwoResults<Impl>(
      TakesLoss(self, weight, nullptr, reduction) && TakesTarget(target, self),
      [&](StructuredCall<Impl, 2>& call) {
        call.meta(self, target, WeightRef(weight), reduction, ignore_index);
        call.Enqueue("aten::nll_loss_forward", self, target,
                     WeightRef(weight), reduction, ignore_index);
        return true;
      },
      op, self, target, weight, reduction, ignore_index);
}

}  // namespace

void RegisterLossKernels(torch::Library& m) {
  m.impl("_softmax", TORCH_FN(SoftmaxForms::Functional));
  m.impl("_softmax.out", TORCH_FN(SoftmaxForms::Out));
  m.impl("_log_softmax", TORCH_FN(LogSoftmaxForms::Functional));
  m.impl("_log_softmax.out", TORCH_FN(LogSoftmaxForms::Out));
  m.impl("_softmax_backward_data", TORCH_FN(SoftmaxBackwardForms::Functional));
  m.impl("_softmax_backward_data.out", TORCH_FN(SoftmaxBackwardForms::Out));
  m.impl("_log_softmax_backward_data",
         TORCH_FN(LogSoftmaxBackwardForms::Functional));
  m.impl("_log_softmax_backward_data.out",
         TORCH_FN(LogSoftmaxBackwardForms::Out));
  m.impl("nll_loss_forward", TORCH_FN(NllLossForward));
  m.impl("nll_loss_backward", TORCH_FN(NllLossBackwardForms::Functional));
  m.impl("nll_loss_backward.grad_input", TORCH_FN(NllLossBackwardForms::Out));
}

}  // namespace openreg
