// Convolution. ATen sends convolutions on devices other than CPU and CUDA to
// convolution_overrideable / convolution_backward_overrideable, whose default
// kernels throw, so the fallback never sees them: these kernels forward them
// to ATen's CPU convolution through the same machinery.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/native/ConvUtils.h>
#include <c10/core/TensorImpl.h>

#include <optional>
#include <utility>
#include <vector>

#include "core/aten/cpu_fallback.h"
#include "core/aten/native_ops.h"

namespace openreg {
namespace {

c10::OperatorHandle FindOp(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

// A CPU tensor with `tensor`'s dtype and geometry and no memory, for asking
// ATen's CPU convolution which backend it would choose: that reads
// geometry only.
at::Tensor CpuStandIn(const at::Tensor& tensor) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0,
                       c10::DataPtr(nullptr, c10::Device(c10::kCPU)),
                       /*allocator=*/nullptr, /*resizable=*/false);
  at::Tensor stand_in = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU),
      tensor.dtype());
  stand_in.unsafeGetTensorImpl()->set_sizes_and_strides(
      tensor.sizes(), tensor.strides(), tensor.storage_offset());
  return stand_in;
}

// The memory format ATen's CPU convolution gives its output for the
// arguments of `convolution` on `stack`: the backend it picks decides
// (oneDNN and the slow kernels keep a channels-last input or weight
// channels-last). The meta kernel, which shapes openreg's output, always
// answers contiguous.
c10::MemoryFormat CpuOutputFormat(const torch::jit::Stack& stack) {
  constexpr size_t kArguments = 9;
  const auto arguments = torch::jit::last(stack, kArguments);
  // Every CPU backend answers channels-last only for an input or weight
  // that suggests a channels-last format, so without one the answer is
  // known. Choosing the backend cost a small convolution on openreg 15% of
  // its instructions.
  const auto suggests_channels_last = [](const at::Tensor& tensor) {
    const c10::MemoryFormat format = tensor.suggest_memory_format();
    return format == c10::MemoryFormat::ChannelsLast ||
           format == c10::MemoryFormat::ChannelsLast3d;
  };
  if (!suggests_channels_last(arguments[0].toTensor()) &&
      !suggests_channels_last(arguments[1].toTensor())) {
    return c10::MemoryFormat::Contiguous;
  }
  const at::Tensor input = CpuStandIn(arguments[0].toTensor());
  const at::Tensor weight = CpuStandIn(arguments[1].toTensor());
  // A missing bias may come as None or as an undefined tensor.
  std::optional<at::Tensor> bias;
  if (!arguments[2].isNone() && arguments[2].toTensor().defined()) {
    bias = CpuStandIn(arguments[2].toTensor());
  }
  const std::vector<int64_t> stride = arguments[3].toIntVector();
  const std::vector<int64_t> padding = arguments[4].toIntVector();
  const std::vector<int64_t> dilation = arguments[5].toIntVector();
  const std::vector<int64_t> output_padding = arguments[7].toIntVector();
  const at::native::ConvBackend backend = at::native::select_conv_backend(
      input, weight, bias, c10::fromIntArrayRefSlow(stride),
      c10::fromIntArrayRefSlow(padding), c10::fromIntArrayRefSlow(dilation),
      arguments[6].toBool(), c10::fromIntArrayRefSlow(output_padding),
      arguments[8].toInt(), /*bias_sizes_opt=*/std::nullopt);
  return at::native::_determine_backend_memory_format(input, weight, backend);
}

}  // namespace

void ConvolutionOverrideable(const c10::OperatorHandle& /*op*/,
                             c10::DispatchKeySet /*keys*/,
                             torch::jit::Stack* stack) {
  // convolution_overrideable has exactly convolution's arguments.
  static const c10::OperatorHandle convolution = FindOp("aten::convolution", "");
  RunCpuKernelOf(convolution, stack, CpuOutputFormat(*stack));
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
