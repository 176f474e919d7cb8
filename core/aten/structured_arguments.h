// What the kernels built on StructuredCall (core/aten/structured_calls.h)
// share about their arguments besides it: which tensors the CPU
// implementation can read on the stream as the CPU would (PlainOpenRegOn,
// and StructuredTakes with the dtypes it dispatches on), which kind of
// output a call hands the meta function, and the CPU fallback of an op with
// two results. Kept apart from structured_calls.h, which holds the call
// itself.
//
// Thread-safety: plain functions over the caller's arguments.
#ifndef OPENREG_CORE_ATEN_STRUCTURED_ARGUMENTS_H_
#define OPENREG_CORE_ATEN_STRUCTURED_ARGUMENTS_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/Device.h>

#include <initializer_list>
#include <tuple>
#include <utility>

#include "core/aten/argument_devices.h"
#include "core/aten/cpu_fallback.h"
#include "core/aten/iterator_loops.h"
#include "core/aten/structured_calls.h"

namespace openreg {

// Whether every tensor of `tensors` (null entries, such as a missing out=
// tensor, are skipped) is an openreg tensor on `device` whose stored values
// are its values: neither lazily conjugated nor lazily negated. CPU tensors,
// other devices and lazy bits are the CPU fallback's, which gives their
// results and errors.
inline bool PlainOpenRegOn(const at::Device& device,
                           std::initializer_list<const at::Tensor*> tensors) {
  for (const at::Tensor* tensor : tensors) {
    if (tensor == nullptr) continue;
    if (!IsOpenReg(*tensor) || tensor->device() != device || !Plain(*tensor)) {
      return false;
    }
  }
  return true;
}

// Float, double, half, bfloat16 and complex float and double: the dtypes
// every CPU implementation StructuredTakes is used for without a predicate
// dispatches on.
bool StructuredDtype(at::ScalarType dtype);

// Whether a structured op's CPU implementation can run on `inputs` writing
// `out` (null: a fresh result) as it runs on the CPU: plain openreg tensors
// on one device (PlainOpenRegOn), the inputs of one dtype among float,
// double, half, bfloat16 and complex float and double, which every CPU
// implementation using this dispatches on (the others stay on the fallback,
// which covers them, rather than risk an error raised from inside work on
// the stream). Lazy conjugation is left to the fallback, which resolves it
// as ATen's CPU wrappers do.
// An out= tensor of another dtype is StructuredOutput's to check.
bool StructuredTakes(std::initializer_list<const at::Tensor*> inputs,
                     const at::Tensor* out);
// The same, for an op whose CPU implementation dispatches on the dtypes
// `takes` accepts (reductions of integers and bools, whose implementations
// convert as they accumulate).
bool StructuredTakes(std::initializer_list<const at::Tensor*> inputs,
                     const at::Tensor* out, bool (*takes)(at::ScalarType));

// The output kind of a call of Forms (iterator_loops.h) on `self` writing
// `out`: none is a functional call, `self` itself an in-place one.
inline OutputKind OutputKindOf(const at::Tensor& self, const at::Tensor* out) {
  if (out == nullptr) return OutputKind::kFresh;
  return out == &self ? OutputKind::kInPlace : OutputKind::kOut;
}

// The CPU fallback for `op`, whose schema returns two tensors, on these
// arguments.
template <typename... Args>
std::tuple<at::Tensor, at::Tensor> FallbackOfTwo(const c10::OperatorHandle& op,
                                                 const Args&... args) {
  torch::jit::Stack stack;
  stack.reserve(sizeof...(args));
  torch::jit::push(stack, args...);
  RunCpuKernelOf(op, &stack);
  return {std::move(stack[0]).toTensor(), std::move(stack[1]).toTensor()};
}

// An op with two results through StructuredCall<Impl, 2>, fresh results:
// when `takes`, `enqueue(call)` runs the meta function and enqueues the
// implementation, or returns false to leave the call to the fallback of
// `op`, which then runs on `args`.
template <typename Impl, typename Enqueue, typename... Args>
std::tuple<at::Tensor, at::Tensor> TwoResults(bool takes, Enqueue enqueue,
                                              const c10::OperatorHandle& op,
                                              const Args&... args) {
  if (takes) {
    StructuredCall<Impl, 2> call;
    if (enqueue(call)) return {call.output(0), call.output(1)};
  }
  return FallbackOfTwo(op, args...);
}

// The same into the out= tensors `first` and `second`, taken when `takes`
// and they are plain openreg tensors on `device`; the fallback of `op` runs
// on `args` and them.
template <typename Impl, typename Enqueue, typename... Args>
std::tuple<at::Tensor&, at::Tensor&> TwoResultsInto(
    bool takes, const at::Device& device, at::Tensor& first,
    at::Tensor& second, Enqueue enqueue, const c10::OperatorHandle& op,
    const Args&... args) {
  if (takes && PlainOpenRegOn(device, {&first, &second})) {
    StructuredCall<Impl, 2> call({&first, &second});
    if (enqueue(call)) return {first, second};
  }
  Fallback(op, args..., first, second);
  return {first, second};
}

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_STRUCTURED_ARGUMENTS_H_
