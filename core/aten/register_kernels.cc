// Every ATen registration of openreg in one place: the native kernels for
// PrivateUse1, the CPU fallback for everything else, and the CPU allocator
// that lets fallback kernels allocate device memory.
//
// Static initializers; the library is linked with alwayslink so the linker
// keeps them.
#include <c10/core/CPUAllocator.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/aten/cpu_fallback.h"
#include "core/aten/kernel_memory.h"
#include "core/aten/layout_fallback.h"
#include "core/aten/native_ops.h"
#include "core/aten/out_variants.h"

namespace openreg {
namespace {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(Empty));
  m.impl("empty_strided", TORCH_FN(EmptyStrided));
  m.impl("as_strided", TORCH_FN(AsStrided));
  m.impl("view", TORCH_FN(View));
  m.impl("_reshape_alias", TORCH_FN(ReshapeAlias));
  m.impl("resize_", TORCH_FN(Resize));
  m.impl("set_", TORCH_FN(SetEmpty));
  m.impl("set_.source_Storage", TORCH_FN(SetStorage));
  m.impl("set_.source_Storage_storage_offset",
         TORCH_FN(SetStorageWithGeometry));
  m.impl("set_.source_Tensor", TORCH_FN(SetTensor));
  m.impl("_copy_from", TORCH_FN(CopyFrom));
  m.impl("_copy_from_and_resize", TORCH_FN(CopyFromAndResize));
  m.impl("_local_scalar_dense", TORCH_FN(LocalScalarDense));
  m.impl("record_stream", TORCH_FN(RecordStream));
  m.impl("_has_compatible_shallow_copy_type",
         TORCH_FN(HasCompatibleShallowCopyType));
  m.impl("_thnn_fused_lstm_cell", TORCH_FN(FusedLstmCell));
  m.impl("_thnn_fused_lstm_cell_backward_impl",
         TORCH_FN(FusedLstmCellBackward));
  m.impl("_thnn_fused_gru_cell", TORCH_FN(FusedGruCell));
  m.impl("_thnn_fused_gru_cell_backward", TORCH_FN(FusedGruCellBackward));
  m.impl("lstm.input", TORCH_FN(Lstm));
  m.impl("mkldnn_rnn_layer", TORCH_FN(MkldnnRnnLayer));
  m.impl("convolution_overrideable",
         torch::CppFunction::makeFromBoxedFunction<&ConvolutionOverrideable>());
  m.impl("convolution_backward_overrideable",
         TORCH_FN(ConvolutionBackwardOverrideable));
  RegisterElementwiseKernels(m);
  RegisterPointwiseKernels(m);
  RegisterActivationKernels(m);
  RegisterUnaryMathKernels(m);
  RegisterComparisonKernels(m);
  RegisterIndexKernels(m);
  RegisterMatmulKernels(m);
  RegisterReductionKernels(m);
  RegisterLossKernels(m);
  RegisterCatKernels(m);
  RegisterGatherKernels(m);
  RegisterScanKernels(m);
  RegisterTopkKernels(m);
  RegisterAttentionKernels(m);
}

// at::lstm is CompositeImplicitAutograd: openreg's kernel replaces its
// decomposition above autograd too, and builds the graph from ops that have
// derivatives (Note [Fused LSTM layers] in recurrent_layers.cc).
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("lstm.input", TORCH_FN(Lstm));
}

// ATen's Conjugate and Negative fallbacks materialize a lazily conjugated or
// negated argument with clone(), which copies through _copy_from again on
// every device but the CPU and CUDA: endless recursion. openreg's copies read
// the bits themselves (copy_ops.cc), so the copy goes straight to them.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

// Priority 1 outranks PyTorch's default CPU allocator (priority 0), which the
// router wraps. See Note [Kernel allocations in device memory].
const bool kernel_memory_router_installed = [] {
  c10::SetCPUAllocator(&KernelMemoryRouter::Get(), /*priority=*/1);
  return true;
}();

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&CpuFallback>());
}

// Sparse, quantized and nested tensors, and the ops that make them from
// strided ones: see layout_fallback.h.
TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&LayoutFallback>());
}

TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&LayoutFallback>());
}

TORCH_LIBRARY_IMPL(_, QuantizedPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&LayoutFallback>());
}

TORCH_LIBRARY_IMPL(_, NestedTensorPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&LayoutFallback>());
}

TORCH_LIBRARY_IMPL(aten, QuantizedPrivateUse1, m) {
  m.impl("_copy_from",
         torch::CppFunction::makeFromBoxedFunction<&LayoutCopyFrom>());
}

// Registers `kernel` as the `openreg_key` kernel of every aten op that has a
// kernel for `cpu_key`, no `openreg_key` kernel yet, and passes `wanted`.
template <void (*kernel)(const c10::OperatorHandle&, c10::DispatchKeySet,
                         torch::jit::Stack*)>
void RegisterForOpsWithKernel(
    c10::DispatchKey cpu_key, c10::DispatchKey openreg_key,
    bool (*wanted)(const c10::OperatorHandle&)) {
  c10::Dispatcher& dispatcher = c10::Dispatcher::singleton();
  // Registrations last as long as the process: never destroyed.
  auto* library = new torch::Library(torch::Library::IMPL, "aten", openreg_key,
                                     __FILE__, __LINE__);
  for (const c10::OperatorName& name :
       dispatcher.getAllOpNamesForDispatchKey(cpu_key)) {
    constexpr std::string_view kNamespace = "aten::";
    if (!name.name.starts_with(kNamespace)) continue;
    const std::optional<c10::OperatorHandle> op = dispatcher.findOp(name);
    if (!op.has_value() || op->hasKernelForDispatchKey(openreg_key) ||
        !wanted(*op)) {
      continue;
    }
    const std::string unqualified =
        name.name.substr(kNamespace.size()) +
        (name.overload_name.empty() ? "" : "." + name.overload_name);
    library->impl(unqualified.c_str(),
                  torch::CppFunction::makeFromBoxedFunction<kernel>());
  }
}

// Every aten op with a CPU kernel for a sparse, quantized or nested layout
// gets the layout fallback as its openreg kernel for that layout. A fallback alone is
// not enough: an op with a CompositeExplicitAutograd default (is_coalesced,
// col_indices, ...) would run that default, meant for strided tensors, on
// openreg's sparse tensors, where the CPU runs its sparse kernel.
const bool layout_kernels_registered = [] {
  constexpr std::pair<c10::DispatchKey, c10::DispatchKey> kLayouts[] = {
      {c10::DispatchKey::SparseCPU, c10::DispatchKey::SparsePrivateUse1},
      {c10::DispatchKey::SparseCsrCPU, c10::DispatchKey::SparseCsrPrivateUse1},
      {c10::DispatchKey::QuantizedCPU, c10::DispatchKey::QuantizedPrivateUse1},
      {c10::DispatchKey::NestedTensorCPU,
       c10::DispatchKey::NestedTensorPrivateUse1},
  };
  for (const auto& [cpu_key, openreg_key] : kLayouts) {
    RegisterForOpsWithKernel<&LayoutFallback>(
        cpu_key, openreg_key, [](const c10::OperatorHandle&) { return true; });
  }
  return true;
}();

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* op :
       {"quantize_per_tensor", "quantize_per_tensor.tensor_qparams",
        "quantize_per_tensor.tensors", "quantize_per_channel",
        "quantize_per_tensor_dynamic", "_to_sparse", "_to_sparse.sparse_dim",
        "_to_sparse_csr", "_to_sparse_csc", "_to_sparse_bsr",
        "_to_sparse_bsc", "_nested_tensor_from_mask", "_nested_from_padded",
        "_nested_view_from_buffer"}) {
    m.impl(op, torch::CppFunction::makeFromBoxedFunction<&LayoutFallback>());
  }
}

// Ops with no CPU kernel, only a CompositeExplicitAutograd one that works on
// the CPU but not on openreg, run that composite on the CPU: conj_physical_'s
// runs conj_physical's DispatchStub for the tensor's device, which has no
// openreg entry ("DispatchStub: missing kernel", e.g. from svd's out= variant
// in complex dtypes); mode.values' (torch.mode with out=) accepts only CPU,
// CUDA and XPU tensors.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* op : {"conj_physical_", "mode.values"}) {
    m.impl(op, torch::CppFunction::makeFromBoxedFunction<&CpuFallback>());
  }
}

// Ops with a CPU kernel and a composite kernel (CompositeExplicitAutograd or
// CompositeImplicitAutograd, which ATen runs on every device without a
// kernel of its own) get the CPU fallback as their openreg kernel, unless
// they have one already (silu_backward's loop, activation_ops.cc). Without
// it openreg would run the composite, which computes in another order than
// the CPU kernel: native_layer_norm's and native_group_norm's statistics,
// addr's product and sum differ from the CPU's in the last bits, and through
// a Transformer's gradients by more than float32's default tolerance
// (module_db found it); mish_backward's and silu_backward's composites
// round Mish's and SiLU's gradients differently. Their backward ops have
// CPU kernels only, which the fallback runs already. So do the structured
// ops whose out= overload has another contract (mse_loss, smooth_l1_loss):
// their CompositeExplicitAutogradNonFunctional kernel would call that out=
// overload with a scalar `out` (OutOverloadHasOtherContract says what it
// does with it). Last in this file, so the kernels registered above for
// PrivateUse1 stay.
const bool cpu_kernels_over_composites_registered = [] {
  RegisterForOpsWithKernel<&CpuFallback>(
      c10::DispatchKey::CPU, c10::DispatchKey::PrivateUse1,
      [](const c10::OperatorHandle& op) {
        return op.hasKernelForDispatchKey(
                   c10::DispatchKey::CompositeExplicitAutograd) ||
               op.hasKernelForDispatchKey(
                   c10::DispatchKey::CompositeImplicitAutograd) ||
               (OutOverloadHasOtherContract(op.operator_name()) &&
                op.hasKernelForDispatchKey(
                    c10::DispatchKey::CompositeExplicitAutogradNonFunctional));
      });
  return true;
}();

}  // namespace
}  // namespace openreg
