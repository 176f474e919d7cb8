// openreg's autocast policy: the kernels of the AutocastPrivateUse1 dispatch
// key, which torch.autocast("openreg") turns on.
//
// The policy is CUDA's, taken from the op lists ATen publishes in
// ATen/autocast_mode.h for backends to reuse: matmul, linear and convolution
// families run in the autocast dtype (float16 or bfloat16); ops that lose
// accuracy or overflow in low precision (exp/log families, softmax, norms,
// losses, reductions) run in float32; multi-input ops (addcmul, cat-like ops)
// run in the widest input type. Every other op falls through unchanged.
// libtorch registers none of this for PrivateUse1, so without this file
// autocast would be a silent no-op on openreg.
//
// Static initializers; linked with alwayslink (see BUILD.bazel).
#include <ATen/autocast_mode.h>
#include <torch/library.h>

#include <optional>

namespace openreg {
namespace {

using at::Tensor;
using at::ScalarType;
using c10::IntArrayRef;
using c10::Scalar;

// As on CUDA: binary_cross_entropy's log() overflows in float16, and its
// float32 version cannot be chosen safely from inside the op.
Tensor BinaryCrossEntropyUnderAutocast(const Tensor&, const Tensor&,
                                       const std::optional<Tensor>&, int64_t) {
  TORCH_CHECK(
      false,
      "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are "
      "unsafe to autocast on openreg: their log() is inaccurate in float16 "
      "and bfloat16. Use torch.nn.functional.binary_cross_entropy_with_logits "
      "or torch.nn.BCEWithLogitsLoss (they fuse the sigmoid and are safe), or "
      "compute the loss outside the torch.autocast(\"openreg\") region in "
      "float32.");
}

}  // namespace

#define OPENREG_AUTOCAST_LOWER_PRECISION(...) \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define OPENREG_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define OPENREG_AUTOCAST_FP32_SET_OPT_DTYPE(...) \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define OPENREG_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(OPENREG_AUTOCAST_LOWER_PRECISION)
  AT_FORALL_FP32(OPENREG_AUTOCAST_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(OPENREG_AUTOCAST_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(
      KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(OPENREG_AUTOCAST_PROMOTE)
  m.impl("binary_cross_entropy", TORCH_FN(BinaryCrossEntropyUnderAutocast));
}

#undef OPENREG_AUTOCAST_LOWER_PRECISION
#undef OPENREG_AUTOCAST_FP32
#undef OPENREG_AUTOCAST_FP32_SET_OPT_DTYPE
#undef OPENREG_AUTOCAST_PROMOTE

}  // namespace openreg
