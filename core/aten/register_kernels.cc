// Every ATen registration of openreg in one place: the native kernels for
// PrivateUse1, the CPU fallback for everything else, and the CPU allocator
// that lets fallback kernels allocate device memory.
//
// Static initializers; the library is linked with alwayslink so the linker
// keeps them.
#include <c10/core/CPUAllocator.h>
#include <torch/library.h>

#include "core/aten/cpu_fallback.h"
#include "core/aten/kernel_memory.h"
#include "core/aten/native_ops.h"

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
  m.impl("convolution_overrideable",
         torch::CppFunction::makeFromBoxedFunction<&ConvolutionOverrideable>());
  m.impl("convolution_backward_overrideable",
         TORCH_FN(ConvolutionBackwardOverrideable));
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

}  // namespace
}  // namespace openreg
