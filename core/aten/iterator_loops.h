// What the TensorIterator kernels (elementwise_ops.cc, pointwise_ops.cc) share:
// which calls ATen's CPU loops can run exactly as the CPU would, enqueueing a
// loop on the stream, handing every other call to the CPU fallback, and the
// functional, in-place and out= kernels built from those.
//
// The calling thread builds ATen's TensorIterator over the openreg tensors, as
// CUDA does: broadcasting, type promotion, output allocation, overlap checks
// and their errors are ATen's own, raised at the call. The stream then runs
// ATen's CPU loop (the op's DispatchStub) with the iterator's data pointers
// moved to the execution view (docs/memory.md). Files that call a
// DispatchStub build with the CPU-capability defines of the
// elementwise_ops target (core/aten/BUILD.bazel says why).
#ifndef OPENREG_CORE_ATEN_ITERATOR_LOOPS_H_
#define OPENREG_CORE_ATEN_ITERATOR_LOOPS_H_

#include <ATen/TensorIterator.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/Scalar.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>

#include "core/aten/cpu_fallback.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_work.h"

namespace openreg {

// Neither lazily conjugated nor lazily negated: ATen's loops read the stored
// values.
bool Plain(const at::Tensor& tensor);

// The dtypes whose CPU loops read every operand through the iterator. Half,
// bfloat16 and complex half stay out: their binary loops read a broadcast CPU
// scalar operand through the tensor (item()), which on the stream would read
// an openreg tensor from inside work.
bool LoopDtype(at::ScalarType dtype);

bool FloatingOrComplex(at::ScalarType dtype);

// Whether a call on `inputs` writing `out` (null: a fresh result) can run its
// CPU loop without conversions: every tensor a plain openreg tensor of one
// LoopDtype dtype that `takes` accepts.
bool LoopTakes(std::initializer_list<const at::Tensor*> inputs,
               const at::Tensor* out, bool (*takes)(at::ScalarType));

// Raises ATen's error when `value` does not fit `dtype` (a float tensor
// filled with 1e300): the CPU loops convert their scalars with that check,
// which on the stream would raise inside work instead of at the call.
void CheckScalarFits(at::ScalarType dtype, const c10::Scalar& value);

c10::OperatorHandle Op(const char* name, const char* overload);

// The work EnqueueLoop enqueues: the iterator, which owns its operands, and
// the loop that runs over it. Built in place in the work's record, so the
// iterator (several hundred bytes of inline vectors, each move a few hundred
// instructions) is moved once per op, and the op allocates once.
template <typename Loop>
struct LoopWork {
  LoopWork(at::TensorIterator&& iter, Loop loop)
      : iter(std::move(iter)), loop(std::move(loop)) {}
  void operator()() { loop(iter); }

  at::TensorIterator iter;
  Loop loop;
};

// Enqueues `loop(iter)` on the current stream of the iterator's device, the
// iterator's openreg operands moved to the execution view. A CPU scalar
// operand stays where it is: host memory the loop reads as the CPU would.
// The iterator owns its operands, so the memory lives until the loop ran. A
// captured graph runs the same closure on every replay: the loops of
// LoopDtype's dtypes only read the iterator (the reduced-float loops, which
// remove an operand, never get here).
template <typename Loop>
void EnqueueLoop(at::TensorIterator&& iter, const char* op_name, Loop loop) {
  if (iter.numel() == 0) return;
  const c10::DeviceIndex device = iter.device(0).index();
  const intptr_t offset = ExecutionOffsetOf(device);
  for (int i = 0; i < iter.ntensors(); ++i) {
    if (iter.device(i).type() != c10::DeviceType::PrivateUse1) continue;
    iter.unsafe_replace_operand(i,
                                static_cast<char*>(iter.data_ptr(i)) + offset);
  }
  EnqueueInPlaceOnCurrentStream<LoopWork<Loop>>(device, op_name,
                                                std::move(iter),
                                                std::move(loop));
}

// The CPU fallback for `op` on these arguments, for calls the loops do not
// take; returns the op's first result.
template <typename... Args>
at::Tensor Fallback(const c10::OperatorHandle& op, const Args&... args) {
  torch::jit::Stack stack;
  stack.reserve(sizeof...(args));
  torch::jit::push(stack, args...);
  RunCpuKernelOf(op, &stack);
  return std::move(stack[0]).toTensor();
}

// An ATen overload: name and overload name ("" for the default).
struct Overload {
  const char* name;
  const char* overload;
};

// The functional, in-place and out= kernels of an op whose schema is
// (self, Rest...), with `out` last in the out= form. `Kernel` names the
// overloads it has (kFunctional, kInPlace, kOut) and provides
//   Enqueue(self, out, rest...): enqueues the op's loop writing `out` (null:
//   a fresh result) and returns the result, or nothing when the loop cannot
//   take the call and the CPU fallback must.
template <typename Kernel, typename... Rest>
struct Forms {
  static at::Tensor Functional(const at::Tensor& self, Rest... rest) {
    static const c10::OperatorHandle op =
        Op(Kernel::kFunctional.name, Kernel::kFunctional.overload);
    if (auto result = Kernel::Enqueue(self, nullptr, rest...)) {
      return *std::move(result);
    }
    return Fallback(op, self, rest...);
  }

  static at::Tensor& InPlace(at::Tensor& self, Rest... rest) {
    static const c10::OperatorHandle op =
        Op(Kernel::kInPlace.name, Kernel::kInPlace.overload);
    if (!Kernel::Enqueue(self, &self, rest...)) Fallback(op, self, rest...);
    return self;
  }

  static at::Tensor& Out(const at::Tensor& self, Rest... rest,
                         at::Tensor& out) {
    static const c10::OperatorHandle op =
        Op(Kernel::kOut.name, Kernel::kOut.overload);
    if (!Kernel::Enqueue(self, &out, rest...)) {
      Fallback(op, self, rest..., out);
    }
    return out;
  }
};

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_ITERATOR_LOOPS_H_
