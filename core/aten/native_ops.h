// The kernels openreg registers for PrivateUse1 itself, because the CPU
// fallback cannot serve them: allocation, views and storage surgery (which
// must produce openreg tensors), copies across devices, and reading a scalar.
// register_kernels.cc binds them to their ATen schemas.
#ifndef OPENREG_CORE_ATEN_NATIVE_OPS_H_
#define OPENREG_CORE_ATEN_NATIVE_OPS_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/Scalar.h>
#include <c10/core/Stream.h>

#include <array>
#include <optional>
#include <tuple>

namespace torch {
class Library;
}  // namespace torch

namespace openreg {

// --- Allocation (empty_ops.cc) ---------------------------------------------
at::Tensor Empty(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                 std::optional<at::Layout> layout,
                 std::optional<at::Device> device,
                 std::optional<bool> pin_memory,
                 std::optional<at::MemoryFormat> memory_format);
at::Tensor EmptyStrided(at::IntArrayRef size, at::IntArrayRef stride,
                        std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout,
                        std::optional<at::Device> device,
                        std::optional<bool> pin_memory);

// --- Views and storage (view_ops.cc) -----------------------------------------
at::Tensor AsStrided(const at::Tensor& self, at::IntArrayRef size,
                     at::IntArrayRef stride,
                     std::optional<int64_t> storage_offset);
at::Tensor View(const at::Tensor& self, at::IntArrayRef size);
at::Tensor ReshapeAlias(const at::Tensor& self, at::IntArrayRef size,
                        at::IntArrayRef stride);
const at::Tensor& Resize(const at::Tensor& self, at::IntArrayRef size,
                         std::optional<at::MemoryFormat> memory_format);
at::Tensor& SetEmpty(at::Tensor& self);
at::Tensor& SetStorage(at::Tensor& self, at::Storage source);
at::Tensor& SetStorageWithGeometry(at::Tensor& self, at::Storage source,
                                   int64_t storage_offset,
                                   at::IntArrayRef size,
                                   at::IntArrayRef stride);
at::Tensor& SetTensor(at::Tensor& self, const at::Tensor& source);

// --- Copies (copy_ops.cc) ------------------------------------------------------
at::Tensor CopyFrom(const at::Tensor& self, const at::Tensor& dst,
                    bool non_blocking);
at::Tensor CopyFromAndResize(const at::Tensor& self, const at::Tensor& dst);
at::Scalar LocalScalarDense(const at::Tensor& self);

// --- Elementwise arithmetic (elementwise_ops.cc)
// -------------------------------- Registers add, sub, mul and div (functional,
// in-place, out=) with `m`, the aten library for PrivateUse1: they run ATen's
// CPU loops over a TensorIterator built on the openreg tensors, and fall back
// to the CPU fallback otherwise.
void RegisterElementwiseKernels(torch::Library& m);

// --- Other pointwise ops (pointwise_ops.cc) ----------------------------------
// Registers relu, threshold_backward, addcmul, addcdiv, lerp (scalar
// weight), pow (a number as the exponent), fill_ and zero_ with `m` the same
// way.
void RegisterPointwiseKernels(torch::Library& m);

// --- Activations (activation_ops.cc) -----------------------------------------
// Registers sigmoid, tanh, silu, gelu, leaky_relu, elu and softplus
// (functional, in-place where ATen has it, out=) and their backward ops
// (functional, grad_input=) with `m` the same way.
void RegisterActivationKernels(torch::Library& m);

// --- Functions of one tensor (unary_math_ops.cc) -----------------------------
// Registers neg, abs, sign, sgn, exp, log, log1p, expm1, sqrt, rsqrt,
// reciprocal, sin, cos and clamp by numbers (functional, in-place, out=)
// with `m` the same way.
void RegisterUnaryMathKernels(torch::Library& m);

// --- Comparisons (comparison_ops.cc) -----------------------------------------
// Registers eq, ne, lt, le, gt and ge with a tensor or a number (functional,
// in-place, out=) with `m` the same way.
void RegisterComparisonKernels(torch::Library& m);

// --- Advanced indexing (index_ops.cc) ----------------------------------------
// Registers index.Tensor with `m`: ATen's meta function builds the iterator
// at the call, and the stream runs ATen's CPU index loop over it.
void RegisterIndexKernels(torch::Library& m);

// --- Matrix products (matmul_ops.cc) ----------------------------------------
// Registers mm, bmm (functional, out=), addmm and baddbmm (functional,
// in-place, out=) with `m`: ATen's meta function at the call, its CPU
// implementation on the stream, the CPU fallback otherwise.
void RegisterMatmulKernels(torch::Library& m);

// --- Reductions (reduction_ops.cc) -------------------------------------------
// Registers sum.dim_IntList, mean.dim, linalg_vector_norm, amax, amin, argmax,
// argmin, any, all, max.dim and min.dim (functional, out=) the same way.
void RegisterReductionKernels(torch::Library& m);

// --- Softmax and losses (loss_ops.cc) ---------------------------------------
// Registers _softmax, _log_softmax and their backward ops (functional, out=),
// nll_loss_forward and nll_loss_backward (functional, and out= for the
// backward) the same way.
void RegisterLossKernels(torch::Library& m);

// --- Concatenation (cat_ops.cc) ----------------------------------------------
// Registers cat (functional, out=) the same way.
void RegisterCatKernels(torch::Library& m);

// --- Gathering along a dimension (gather_ops.cc) ------------------------------
// Registers gather (functional, out=) the same way.
void RegisterGatherKernels(torch::Library& m);

// --- Cumulative sums (scan_ops.cc) -------------------------------------------
// Registers cumsum (functional, in-place, out=) the same way.
void RegisterScanKernels(torch::Library& m);

// --- The k largest or smallest entries (topk_ops.cc) -------------------------
// Registers topk (functional, out=) the same way.
void RegisterTopkKernels(torch::Library& m);

// --- Attention (attention_ops.cc) -------------------------------------------
// Registers the fused scaled dot-product attention kernels (the CPU's flash
// attention on the stream) and, for PrivateUse1, the stub that chooses them.
void RegisterAttentionKernels(torch::Library& m);

// --- Fused recurrent cells (recurrent_ops.cc) ----------------------------------
std::tuple<at::Tensor, at::Tensor, at::Tensor> FusedLstmCell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates,
    const at::Tensor& cx, const std::optional<at::Tensor>& input_bias,
    const std::optional<at::Tensor>& hidden_bias);
std::tuple<at::Tensor, at::Tensor, at::Tensor> FusedLstmCellBackward(
    const std::optional<at::Tensor>& grad_hy,
    const std::optional<at::Tensor>& grad_cy, const at::Tensor& cx,
    const at::Tensor& cy, const at::Tensor& workspace, bool has_bias);
std::tuple<at::Tensor, at::Tensor> FusedGruCell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates,
    const at::Tensor& hx, const std::optional<at::Tensor>& input_bias,
    const std::optional<at::Tensor>& hidden_bias);
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>
FusedGruCellBackward(const at::Tensor& grad_hy, const at::Tensor& workspace,
                     bool has_bias);

// --- Whole LSTM layers (recurrent_layers.cc) ---------------------------------
std::tuple<at::Tensor, at::Tensor, at::Tensor> Lstm(
    const at::Tensor& input, at::TensorList hx, at::TensorList params,
    bool has_biases, int64_t num_layers, double dropout, bool train,
    bool bidirectional, bool batch_first);
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> MkldnnRnnLayer(
    const at::Tensor& input, const at::Tensor& weight0,
    const at::Tensor& weight1, const at::Tensor& weight2,
    const at::Tensor& weight3, const at::Tensor& hx, const at::Tensor& cx,
    bool reverse, at::IntArrayRef batch_sizes, int64_t mode,
    int64_t hidden_size, int64_t num_layers, bool has_biases,
    bool bidirectional, bool batch_first, bool train);

// --- Tensor identity (shallow_copy_ops.cc) ------------------------------------
bool HasCompatibleShallowCopyType(const at::Tensor& self,
                                  const at::Tensor& from);

// --- Streams (record_stream.cc) ----------------------------------------------------
void RecordStream(at::Tensor& self, c10::Stream stream);

// --- Convolution (convolution_ops.cc) -------------------------------------------
void ConvolutionOverrideable(const c10::OperatorHandle& op,
                             c10::DispatchKeySet keys,
                             torch::jit::Stack* stack);
std::tuple<at::Tensor, at::Tensor, at::Tensor> ConvolutionBackwardOverrideable(
    const at::Tensor& grad_output, const at::Tensor& input,
    const at::Tensor& weight, at::IntArrayRef stride, at::IntArrayRef padding,
    at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_NATIVE_OPS_H_
