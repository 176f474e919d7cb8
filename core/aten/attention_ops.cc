// Scaled dot-product attention as one kernel, as on the CPU.
//
// F.scaled_dot_product_attention asks a per-device DispatchStub which backend
// to use. A device that registers none gets the math decomposition: about
// fifteen ops forward and twice that backward per attention call (scale,
// matmul, causal mask built with tril/where/isneginf, safe softmax, matmul),
// each paying the per-op cost; in the GPT-2-style bench model they were most
// of the ops openreg ran beyond the CPU's (docs/performance.md, "Model
// steps"). The CPU picks its fused flash-attention kernel instead.
//
// openreg makes the CPU's choice: where the CPU would run its flash kernel,
// the stub answers "overrideable", so ATen calls
// _scaled_dot_product_fused_attention_overrideable (and, from autograd, its
// backward), which run the CPU's flash kernels on the device's memory through
// the CPU-kernel fallback machinery. Everywhere else (dropout, a mask that
// needs a gradient, shapes the CPU kernel does not take) it answers what the
// CPU answers, the math decomposition, so results match the CPU's.
#include <ATen/SDPBackend.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

#include <array>
#include <optional>
#include <tuple>

#include "core/aten/cpu_fallback.h"
#include "core/aten/native_ops.h"

namespace openreg {
namespace {

c10::OperatorHandle FindOp(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
}

int64_t FusedSdpChoice(const at::Tensor& query, const at::Tensor& key,
                       const at::Tensor& value,
                       const std::optional<at::Tensor>& attn_mask,
                       double dropout_p, bool is_causal,
                       std::optional<double> scale, bool enable_gqa) {
  // The CPU's choice reads only sizes, strides, dtypes and flags.
  const int64_t cpu_choice = at::native::_fused_sdp_choice_stub(
      c10::DeviceType::CPU, query, key, value, attn_mask, dropout_p, is_causal,
      scale, enable_gqa);
  if (cpu_choice != static_cast<int64_t>(at::SDPBackend::flash_attention)) {
    return cpu_choice;
  }
  // The overrideable op's backward returns no mask gradient, and dropout
  // would draw from the CPU generator rather than the device's: both stay on
  // the math decomposition, whose ops do both the device's way.
  const bool mask_needs_grad = attn_mask.has_value() && attn_mask->defined() &&
                               attn_mask->requires_grad();
  // Compiled graphs size the fused op's results with its meta function
  // (torch/_meta_registrations.py), whose layout FusedAttention matches for
  // 4-d inputs whose values are as wide as the queries.
  const bool meta_layout =
      query.dim() == 4 && value.dim() == 4 && value.size(-1) == query.size(-1);
  if (dropout_p != 0.0 || mask_needs_grad || !meta_layout) {
    return static_cast<int64_t>(at::SDPBackend::math);
  }
  return static_cast<int64_t>(at::SDPBackend::overrideable);
}

// A scalar on the query's device for the random state of dropout kernels,
// which the CPU kernel does not have; autograd hands it back unread.
at::Tensor UnusedSeed(const at::Tensor& like) {
  return at::empty({}, like.options().dtype(at::kLong));
}

// `result` in the layout the meta function gives (the query's, and a
// contiguous logsumexp): compiled code checks the strides of what a fallback
// kernel returns. The CPU kernel writes (batch, length, heads, width)-major,
// which is already that layout for heads split from one projection (the
// usual case, so no copy there).
at::Tensor InLayoutOf(const at::Tensor& result, const at::Tensor& layout) {
  if (result.strides() == layout.strides()) return result;
  return layout.copy_(result);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt,
           c10::SymInt, at::Tensor, at::Tensor, at::Tensor>
FusedAttention(const at::Tensor& query, const at::Tensor& key,
               const at::Tensor& value,
               const std::optional<at::Tensor>& attn_bias, double dropout_p,
               bool is_causal, bool /*return_debug_mask*/,
               std::optional<double> scale) {
  static const c10::OperatorHandle forward =
      FindOp("aten::_scaled_dot_product_flash_attention_for_cpu");
  torch::jit::Stack stack;
  torch::jit::push(stack, query, key, value, dropout_p, is_causal, attn_bias,
                   scale);
  RunCpuKernelOf(forward, &stack);
  const at::Tensor output =
      InLayoutOf(stack[0].toTensor(),
                 at::empty_like(query.transpose(1, 2)).transpose(1, 2));
  const at::Tensor logsumexp = stack[1].toTensor().contiguous();
  // (batch, heads, length, width): the longest query and key sequences.
  return {output,
          logsumexp,
          at::Tensor(),
          at::Tensor(),
          c10::SymInt(query.size(-2)),
          c10::SymInt(key.size(-2)),
          UnusedSeed(query),
          UnusedSeed(query),
          at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>
FusedAttentionBackward(const at::Tensor& grad_out, const at::Tensor& query,
                       const at::Tensor& key, const at::Tensor& value,
                       const at::Tensor& attn_bias,
                       std::array<bool, 4> /*grad_input_mask*/,
                       const at::Tensor& out, const at::Tensor& logsumexp,
                       const at::Tensor& /*cum_seq_q*/,
                       const at::Tensor& /*cum_seq_k*/, c10::SymInt /*max_q*/,
                       c10::SymInt /*max_k*/, double dropout_p, bool is_causal,
                       const at::Tensor& /*philox_seed*/,
                       const at::Tensor& /*philox_offset*/,
                       std::optional<double> scale) {
  static const c10::OperatorHandle backward =
      FindOp("aten::_scaled_dot_product_flash_attention_for_cpu_backward");
  std::optional<at::Tensor> mask;
  if (attn_bias.defined()) mask = attn_bias;
  torch::jit::Stack stack;
  torch::jit::push(stack, grad_out, query, key, value, out, logsumexp,
                   dropout_p, is_causal, mask, scale);
  RunCpuKernelOf(backward, &stack);
  // The meta function gives each gradient its input's layout (empty_like).
  const auto like = [](const at::Tensor& gradient, const at::Tensor& input) {
    if (gradient.strides() == input.strides()) return gradient;
    return InLayoutOf(gradient, at::empty_like(input));
  };
  // FusedSdpChoice never picks this kernel for a mask that needs a gradient.
  return {like(stack[0].toTensor(), query), like(stack[1].toTensor(), key),
          like(stack[2].toTensor(), value), at::Tensor()};
}

}  // namespace

void RegisterAttentionKernels(torch::Library& m) {
  m.impl("_scaled_dot_product_fused_attention_overrideable",
         TORCH_FN(FusedAttention));
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward",
         TORCH_FN(FusedAttentionBackward));
}

}  // namespace openreg

// The macro names the stub's types unqualified: it must expand in ATen's
// namespace.
namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &openreg::FusedSdpChoice)
}  // namespace at::native
