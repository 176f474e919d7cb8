// What an op's results will look like, known before the op runs.
//
// An asynchronous device must hand the caller its result tensors before the
// kernel has run, so the core needs their shapes, strides and dtypes up
// front. ATen's meta kernels compute exactly that. Many meta kernels are
// Python registrations costing tens to hundreds of microseconds, so results
// are cached by the op's "signature" (its arguments with every tensor reduced
// to dtype, sizes and strides): a training loop pays once per distinct call.
// A cache hit allocates nothing: the signature is built in a per-thread
// buffer and the cached specs are shared, not copied.
//
// Thread-safety: the cache has its own mutex; InferResultSpecs may be called
// from any user thread.
#ifndef OPENREG_CORE_ATEN_META_SHAPES_H_
#define OPENREG_CORE_ATEN_META_SHAPES_H_

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <memory>
#include <vector>

namespace openreg {

struct TensorSpec {
  at::ScalarType dtype;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  // False for a result the op leaves undefined (convolution_backward's
  // gradients its output_mask does not ask for); the other fields are then
  // meaningless.
  bool defined = true;
};

struct ResultSpecs {
  // One entry per schema return: a single spec for a Tensor, one per element
  // for a Tensor[].
  std::vector<std::vector<TensorSpec>> returns;
  // The geometry each out= argument has after the op, in argument order.
  std::vector<TensorSpec> out_arguments;
};

// Runs the meta kernel of `op` on meta stand-ins for `arguments` (which are
// the op's arguments as the caller passed them). Null when the results
// cannot be known without running the op: no meta kernel, a meta kernel
// known to disagree with the CPU kernel, shapes that depend on data, or
// returns other than tensors and tensor lists.
std::shared_ptr<const ResultSpecs> InferResultSpecs(
    const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> arguments);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_META_SHAPES_H_
