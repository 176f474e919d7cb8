// The fused LSTM and GRU cells. ATen's recurrent layers (nn.LSTM, nn.GRU and
// their cells) call _thnn_fused_lstm_cell / _thnn_fused_gru_cell on every
// accelerator, and PyTorch has kernels for them on CUDA only, so the CPU
// fallback had nothing to run. openreg implements them, and the backward
// kernels autograd pairs with them, with ordinary ATen ops on openreg tensors
// (each enqueued on the stream like any op). float32 LSTM layers without
// projections do not come here: they run whole (recurrent_layers.cc).
// Workspaces keep CUDA's layout:
// the LSTM's activated gates [i, f, g, o] (B x 4H); the GRU's
// [r, z, n, hidden part of n, hx] (B x 5H).
#include <ATen/TensorOperators.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/zeros_like.h>

#include <optional>
#include <tuple>
#include <vector>

#include "core/aten/native_ops.h"

namespace openreg {
namespace {

at::Tensor WithBias(const at::Tensor& gates,
                    const std::optional<at::Tensor>& bias) {
  return bias.has_value() && bias->defined() ? gates + *bias : gates;
}

// d sigmoid(x) / dx, from y = sigmoid(x).
at::Tensor SigmoidSlope(const at::Tensor& y) { return y * (1 - y); }
// d tanh(x) / dx, from y = tanh(x).
at::Tensor TanhSlope(const at::Tensor& y) { return 1 - y * y; }

at::Tensor GradOrZeros(const std::optional<at::Tensor>& grad,
                       const at::Tensor& like) {
  return grad.has_value() && grad->defined() ? *grad : at::zeros_like(like);
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> FusedLstmCell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates,
    const at::Tensor& cx, const std::optional<at::Tensor>& input_bias,
    const std::optional<at::Tensor>& hidden_bias) {
  const at::Tensor gates =
      WithBias(WithBias(input_gates + hidden_gates, input_bias), hidden_bias);
  const std::vector<at::Tensor> chunks = gates.chunk(4, /*dim=*/1);
  const at::Tensor input_gate = at::sigmoid(chunks[0]);
  const at::Tensor forget_gate = at::sigmoid(chunks[1]);
  const at::Tensor cell_gate = at::tanh(chunks[2]);
  const at::Tensor output_gate = at::sigmoid(chunks[3]);
  at::Tensor cy = forget_gate * cx + input_gate * cell_gate;
  at::Tensor hy = output_gate * at::tanh(cy);
  at::Tensor workspace =
      at::cat({input_gate, forget_gate, cell_gate, output_gate}, /*dim=*/1);
  return {std::move(hy), std::move(cy), std::move(workspace)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> FusedLstmCellBackward(
    const std::optional<at::Tensor>& grad_hy,
    const std::optional<at::Tensor>& grad_cy, const at::Tensor& cx,
    const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  const std::vector<at::Tensor> gates = workspace.chunk(4, /*dim=*/1);
  const at::Tensor& input_gate = gates[0];
  const at::Tensor& forget_gate = gates[1];
  const at::Tensor& cell_gate = gates[2];
  const at::Tensor& output_gate = gates[3];
  const at::Tensor d_hy = GradOrZeros(grad_hy, cy);
  const at::Tensor tanh_cy = at::tanh(cy);
  // Everything that reaches cy: its own gradient and hy's, through tanh.
  const at::Tensor d_cy =
      GradOrZeros(grad_cy, cy) + d_hy * output_gate * TanhSlope(tanh_cy);
  at::Tensor grad_gates = at::cat(
      {d_cy * cell_gate * SigmoidSlope(input_gate),
       d_cy * cx * SigmoidSlope(forget_gate),
       d_cy * input_gate * TanhSlope(cell_gate),
       d_hy * tanh_cy * SigmoidSlope(output_gate)},
      /*dim=*/1);
  at::Tensor grad_cx = d_cy * forget_gate;
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {std::move(grad_gates), std::move(grad_cx), std::move(grad_bias)};
}

std::tuple<at::Tensor, at::Tensor> FusedGruCell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates,
    const at::Tensor& hx, const std::optional<at::Tensor>& input_bias,
    const std::optional<at::Tensor>& hidden_bias) {
  const std::vector<at::Tensor> input =
      WithBias(input_gates, input_bias).chunk(3, /*dim=*/1);
  const std::vector<at::Tensor> hidden =
      WithBias(hidden_gates, hidden_bias).chunk(3, /*dim=*/1);
  const at::Tensor reset_gate = at::sigmoid(input[0] + hidden[0]);
  const at::Tensor update_gate = at::sigmoid(input[1] + hidden[1]);
  const at::Tensor new_gate = at::tanh(input[2] + reset_gate * hidden[2]);
  at::Tensor hy = (hx - new_gate) * update_gate + new_gate;
  at::Tensor workspace =
      at::cat({reset_gate, update_gate, new_gate, hidden[2], hx}, /*dim=*/1);
  return {std::move(hy), std::move(workspace)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>
FusedGruCellBackward(const at::Tensor& grad_hy, const at::Tensor& workspace,
                     bool has_bias) {
  const std::vector<at::Tensor> saved = workspace.chunk(5, /*dim=*/1);
  const at::Tensor& reset_gate = saved[0];
  const at::Tensor& update_gate = saved[1];
  const at::Tensor& new_gate = saved[2];
  const at::Tensor& hidden_new = saved[3];
  const at::Tensor& hx = saved[4];
  // hy = update * hx + (1 - update) * new
  const at::Tensor d_update = grad_hy * (hx - new_gate) * SigmoidSlope(update_gate);
  const at::Tensor d_new =
      grad_hy * (1 - update_gate) * TanhSlope(new_gate);
  const at::Tensor d_reset = d_new * hidden_new * SigmoidSlope(reset_gate);
  at::Tensor grad_input_gates = at::cat({d_reset, d_update, d_new}, /*dim=*/1);
  at::Tensor grad_hidden_gates =
      at::cat({d_reset, d_update, d_new * reset_gate}, /*dim=*/1);
  at::Tensor grad_hx = grad_hy * update_gate;
  at::Tensor grad_input_bias =
      has_bias ? grad_input_gates.sum(0) : at::Tensor();
  at::Tensor grad_hidden_bias =
      has_bias ? grad_hidden_gates.sum(0) : at::Tensor();
  return {std::move(grad_input_gates), std::move(grad_hidden_gates),
          std::move(grad_hx), std::move(grad_input_bias),
          std::move(grad_hidden_bias)};
}

}  // namespace openreg
