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
#include <c10/core/Storage.h>
#include <c10/util/SmallVector.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <utility>

#include "core/aten/cpu_fallback.h"
#include "core/torch_runtime/device_allocator.h"
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

// LoopDtype's and half and bfloat16: the dtypes of the loops that never read
// a CPU scalar operand (copies, concatenation, indexing).
bool LoopDtypeWithoutScalars(at::ScalarType dtype);

// Dtype predicates for what a loop takes.
bool FloatingOrComplex(at::ScalarType dtype);
bool Floating(at::ScalarType dtype);
// Not complex: ATen's sign loop.
bool Real(at::ScalarType dtype);
// Real dtypes but bool: ATen's abs, clamp, threshold and addcmul loops.
bool RealNotBool(at::ScalarType dtype);
bool NotBool(at::ScalarType dtype);

// How type promotion ranks a Python number against a tensor: a number of a
// category no higher than the tensor's dtype's leaves that dtype the result's.
enum class PromotionCategory { kBool, kIntegral, kFloating, kComplex };
PromotionCategory CategoryOf(at::ScalarType dtype);
PromotionCategory CategoryOf(const c10::Scalar& number);

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

// ATen's TensorIterator for a call without an output tensor (a functional
// op), allocating the results itself. at::TensorIterator allocates through
// the dispatcher (at::empty), which costs a tiny op about a twentieth of its
// time; ATen's own CPU kernels allocate directly, and so does this. In-place
// and out= calls, whose outputs exist (and may be resized), use
// at::TensorIterator.
class FreshOutputIterator final : public at::TensorIteratorBase {
 public:
  const at::Tensor& maybe_get_output(int64_t output_idx) override;
  void set_output_raw_strided(int64_t output_idx, at::IntArrayRef sizes,
                              at::IntArrayRef strides,
                              at::TensorOptions options) override;
};

// What FreshOutputIterator's set_output_raw_strided does, for the other
// iterators a kernel builds without an output (index_ops.cc's): allocates
// `operand`'s openreg result directly and hands it to the operand.
void AllocateFreshOutput(at::OperandInfo& operand, at::IntArrayRef sizes,
                         at::IntArrayRef strides,
                         const at::TensorOptions& options);

// Note [Queued loops hold storages, not tensors]
// A queued loop must keep its operands' memory alive until the stream ran it.
// Its iterator owns its operands' tensors, and keeping those would keep their
// TensorImpls alive: when Python drops such a tensor first (every
// intermediate of an expression, as `(a * 2).sin()` drops `a * 2`), PyTorch
// keeps its Python object alive as long as the TensorImpl. So on
// threaded_sim every queued op left a Python object for the garbage
// collector, and a loop of tiny ops that filled the queue ran a full
// collection of the process (about 80 ms with torch imported) every
// ~40,000 ops, which CPU eager never does (docs/performance.md, "Queued
// loops without Python objects"). The loop itself reads only what the
// iterator's operand records keep (data pointers, strides, dtypes), so once
// the iterator is built each openreg operand's tensor is dropped from it and
// the work holds the operand's storage instead. CPU scalar operands keep
// their tensors: host memory the loop reads, with no Python object.
//
// The storage of an operand whose memory is stream-ordered on the loop's
// stream is not held either: a free only lets later work on that stream
// reuse it (Note [Stream-ordered reuse]). So a loop of ops on results
// Python drops at once reuses the same few blocks.
//
// Replaces every openreg operand's tensor in `iter` by an undefined one and
// appends the operand's storage to `storages`, unless it is stream-ordered
// on `work_stream` (StreamOrderingWork).
void HoldStoragesInsteadOfTensors(at::TensorIteratorBase& iter,
                                  openreg_stream work_stream,
                                  c10::SmallVectorImpl<c10::Storage>* storages);

// The work EnqueueLoop enqueues: an iterator and the loop that runs over it,
// and the storages of the iterator's openreg operands that the stream does
// not order (Note [Queued loops hold storages, not tensors]). The iterator is
// built inside the work's record (several hundred bytes of inline vectors,
// which a move would copy), so the op allocates once and moves nothing.
template <typename Iterator, typename Loop>
struct LoopWork {
  explicit LoopWork(Loop loop) : loop(std::move(loop)) {}
  void operator()() { loop(iter); }

  Iterator iter;
  Loop loop;
  c10::SmallVector<c10::Storage, 4> storages;
};

// Builds an `Iterator` with `build(iter)` over openreg tensors of `device`
// and enqueues `loop(iter)` on the device's current stream, the iterator's
// openreg operands moved to the execution view; returns the iterator's first
// output. A CPU scalar operand stays where it is: host memory the loop reads
// as the CPU would. The work holds the operands' storages, so the memory
// lives until the loop ran. A captured graph runs the same closure on every
// replay: the loops of LoopDtype's dtypes only read the iterator (the
// reduced-float loops, which remove an operand, never get here).
template <typename Iterator, typename Build, typename Loop>
at::Tensor EnqueueLoop(c10::DeviceIndex device, const char* op_name,
                       Build&& build, Loop loop) {
  auto record = MakeWorkRecord<LoopWork<Iterator, Loop>>(
      op_name, device, CurrentDriverStream(device), std::move(loop));
  Iterator& iter = record->work().iter;
  std::forward<Build>(build)(iter);
  at::Tensor result = iter.output();
  if (iter.numel() == 0) return result;
  // TensorIterator rejects operands on two openreg devices.
  TORCH_INTERNAL_ASSERT(iter.device(0).index() == device,
                        "openreg internal error: ", op_name, " built on ",
                        iter.device(0), ", enqueued on openreg:",
                        static_cast<int>(device));
  const intptr_t offset = ExecutionOffsetOf(device);
  for (int i = 0; i < iter.ntensors(); ++i) {
    if (iter.device(i).type() != c10::DeviceType::PrivateUse1) continue;
    iter.unsafe_replace_operand(i,
                                static_cast<char*>(iter.data_ptr(i)) + offset);
  }
  // A gathered loop owns all its operands' memory, stream-ordered or not: it
  // is enqueued only when the foreach op returns or raises, and a result the
  // op drops when it raises must not be reused before its writer is enqueued.
  HoldStoragesInsteadOfTensors(
      iter,
      GatheringLaunches() ? nullptr : StreamOrderingWork(record->stream),
      &record->work().storages);
  // Gathered with its neighbours inside a _foreach_ op (Note [One launch per
  // foreach call]).
  EnqueueLoopRecord(std::move(record));
  return result;
}

// EnqueueLoop with the iterator for `out`: FreshOutputIterator when there is
// none (null), else at::TensorIterator. A loop that takes only an
// at::TensorIterator (fill_stub's) is for calls with an output.
template <typename Build, typename Loop>
at::Tensor EnqueueLoopWriting(const at::Tensor* out, c10::DeviceIndex device,
                              const char* op_name, Build&& build, Loop loop) {
  if constexpr (std::is_invocable_v<Loop&, FreshOutputIterator&>) {
    if (out == nullptr) {
      return EnqueueLoop<FreshOutputIterator>(device, op_name,
                                              std::forward<Build>(build),
                                              std::move(loop));
    }
  }
  TORCH_INTERNAL_ASSERT(out != nullptr, "openreg internal error: ", op_name,
                        " has no loop for a call without an output");
  return EnqueueLoop<at::TensorIterator>(device, op_name,
                                         std::forward<Build>(build),
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
//   take the call and the CPU fallback must;
// and optionally
//   FunctionalFallback(self, rest...): what a functional call the loop does
//   not take runs instead of the CPU fallback of the functional overload.
template <typename Kernel, typename... Rest>
struct Forms {
  static at::Tensor Functional(const at::Tensor& self, Rest... rest) {
    if (auto result = Kernel::Enqueue(self, nullptr, rest...)) {
      return *std::move(result);
    }
    if constexpr (requires { Kernel::FunctionalFallback(self, rest...); }) {
      return Kernel::FunctionalFallback(self, rest...);
    } else {
      static const c10::OperatorHandle op =
          Op(Kernel::kFunctional.name, Kernel::kFunctional.overload);
      return Fallback(op, self, rest...);
    }
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

// An op described by `PointwiseOp`, as Forms' kernel. The description gives
// the op's name for the stream's work, the overloads it has (kFunctional,
// kInPlace, kOut), and
//   Takes(out, self, rest...): whether its loop runs this call as the CPU;
//   Check(self, rest...): ATen's checks beyond the iterator's, at the call;
//   Build(iter, out, self, rest...): the iterator, as ATen's kernel builds
//   it, owning its operands (the loop runs after the call returned);
//   Loop(rest...): the CPU loop, keeping by value what it needs of `rest`.
template <typename PointwiseOp>
struct Pointwise : PointwiseOp {
  template <typename... Rest>
  static std::optional<at::Tensor> Enqueue(const at::Tensor& self,
                                           const at::Tensor* out,
                                           const Rest&... rest) {
    if (!PointwiseOp::Takes(out, self, rest...)) return std::nullopt;
    PointwiseOp::Check(self, rest...);
    at::TensorBase out_base;
    if (out != nullptr) out_base = *out;
    return EnqueueLoopWriting(
        out, self.device().index(), PointwiseOp::kName,
        [&](at::TensorIteratorBase& iter) {
          PointwiseOp::Build(iter, out_base, self, rest...);
        },
        PointwiseOp::Loop(rest...));
  }
};

// The names of an op of one tensor with functional, in-place and out=
// overloads, `kOp` and `kInPlaceOp` ("aten::neg", "aten::neg_").
template <const char* kOp, const char* kInPlaceOp>
struct UnaryNames {
  static constexpr const char* kName = kOp;
  static constexpr Overload kFunctional{kOp, ""};
  static constexpr Overload kInPlace{kInPlaceOp, ""};
  static constexpr Overload kOut{kOp, "out"};
};

// A DispatchStub's CPU loop, as a function a description can name.
template <auto& Stub>
void RunStub(at::TensorIteratorBase& iter) {
  Stub(c10::DeviceType::CPU, iter);
}

// A Pointwise description of an op of one tensor: `kRun` (RunStub, or a
// function choosing among loops) on an iterator built by `kBuild` (ATen's
// build_unary_op keeps the input's dtype, build_unary_float_op would
// promote an integer input to float, which the loop does not take), for
// inputs of the dtypes `kTakes` accepts.
template <typename Names,
          void (at::TensorIteratorBase::*kBuild)(const at::TensorBase&,
                                                 const at::TensorBase&),
          void (*kRun)(at::TensorIteratorBase&),
          bool (*kTakes)(at::ScalarType) = FloatingOrComplex>
struct UnaryLoop : Names {
  static bool Takes(const at::Tensor* out, const at::Tensor& self) {
    return LoopTakes({&self}, out, kTakes);
  }
  static void Check(const at::Tensor& /*self*/) {}
  static void Build(at::TensorIteratorBase& iter, const at::TensorBase& out,
                    const at::Tensor& self) {
    (iter.*kBuild)(out, self);
  }
  static auto Loop() { return kRun; }
};

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_ITERATOR_LOOPS_H_
