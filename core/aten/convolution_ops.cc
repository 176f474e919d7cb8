// Convolution. ATen sends convolutions on devices other than CPU and CUDA to
// convolution_overrideable / convolution_backward_overrideable, whose default
// kernels throw, so the fallback never sees them: these kernels forward them
// to ATen's CPU convolution through the same machinery.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include "core/aten/cpu_fallback.h"
#include "core/aten/native_ops.h"

namespace openreg {
namespace {

c10::OperatorHandle FindOp(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

}  // namespace

void ConvolutionOverrideable(const c10::OperatorHandle& /*op*/,
                             c10::DispatchKeySet /*keys*/,
                             torch::jit::Stack* stack) {
  // convolution_overrideable has exactly convolution's arguments.
  static const c10::OperatorHandle convolution = FindOp("aten::convolution", "");
  RunCpuKernelOf(convolution, stack);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ConvolutionBackwardOverrideable(
    const at::Tensor& grad_output, const at::Tensor& input,
    const at::Tensor& weight, at::IntArrayRef stride, at::IntArrayRef padding,
    at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  static const c10::OperatorHandle backward =
      FindOp("aten::convolution_backward", "");
  // convolution_backward also wants the bias shape, only to size grad_bias:
  // one entry per output channel.
  const int64_t out_channels =
      transposed ? weight.size(1) * groups : weight.size(0);
  torch::jit::Stack stack;
  torch::jit::push(stack, grad_output, input, weight,
                   std::optional<std::vector<int64_t>>(
                       std::vector<int64_t>{out_channels}),
                   stride.vec(), padding.vec(), dilation.vec(), transposed,
                   output_padding.vec(), groups, output_mask);
  RunCpuKernelOf(backward, &stack);
  return {stack[0].toTensor(), stack[1].toTensor(), stack[2].toTensor()};
}

}  // namespace openreg
