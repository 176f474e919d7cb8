// Structured ATen ops (matmuls, reductions) without the CPU fallback's
// per-call bookkeeping: ATen's own meta function runs at the call on the
// openreg tensors, and the stream runs ATen's own CPU implementation on CPU
// aliases of them.
//
// A structured op is split by ATen into a meta function (argument checks, the
// output's shape and dtype, reported through set_output_*) and an impl
// function that computes into outputs of that shape. The meta function reads
// only sizes, strides and dtypes, so it runs on openreg tensors as they are:
// its errors (shape mismatches and the like) raise at the call with the CPU's
// messages, and the outputs it asks for are allocated, resized or checked
// here, before anything is enqueued. The impl function runs inside work on
// the stream, on CPU aliases (core/aten/cpu_alias.h) of the arguments and the
// output; its sub-steps (copies, temporaries, BLAS) are the CPU's. The
// temporaries it allocates come from the device's memory, as the fallback's
// kernels' do (Note [Kernel allocations in device memory]): an integer sum's
// widened copy of its input counts against the device, not the host.
//
// Calls the impl function could not run exactly as the CPU would go to the
// CPU fallback, which raises the CPU's errors: StructuredTakes
// (core/aten/structured_arguments.h) refuses their tensors, or
// StructuredCall::accepted() turns false for an in-place call whose tensor
// has another dtype or shape (ATen's CPU wrapper would raise), and an out=
// tensor whose strides differ from those the meta function requires (ATen
// would compute into a temporary and copy back). An out= tensor of another
// dtype than the one the meta function asks for raises ATen's out= wrapper's
// error at the call, as on the CPU.
#ifndef OPENREG_CORE_ATEN_STRUCTURED_CALLS_H_
#define OPENREG_CORE_ATEN_STRUCTURED_CALLS_H_

#include <ATen/TensorMeta.h>
#include <ATen/core/IListRef.h>
#include <ATen/core/Tensor.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/Scalar.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/SmallVector.h>

#include <array>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/aten/cpu_alias.h"
#include "core/aten/device_memory_aliases.h"
#include "core/aten/kernel_memory.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_stream.h"
#include "core/torch_runtime/work_record.h"

namespace openreg {

// How a call hands its output to the meta function.
enum class OutputKind {
  kFresh,    // functional: allocate the result
  kOut,      // out=: resize the given tensor as ATen does
  kInPlace,  // the result is `self`: it must already have the shape
};

// One output of one call of a structured op.
class StructuredOutput {
 public:
  // `given` is the out= or in-place tensor (null for kFresh).
  StructuredOutput(OutputKind kind, const at::Tensor* given);

  // What set_output_raw_strided (`exact_strides` false) and
  // set_output_strided (true) of the meta function ask for.
  void Set(at::IntArrayRef sizes, at::IntArrayRef strides,
           const at::TensorOptions& options, bool exact_strides);

  // Whether the impl function can write the output as the CPU's would.
  bool accepted() const { return accepted_; }
  const at::Tensor& tensor() const { return tensor_; }

 private:
  OutputKind kind_;
  at::Tensor tensor_;
  bool accepted_ = true;
};

// A CPU alias of `value` for the impl function when it is a tensor; any
// other argument as a value the closure owns (an IntArrayRef points into the
// caller's frame, so it is copied).
inline at::Tensor HeldArgument(CpuAliases& aliases, const at::Tensor& value) {
  return aliases.Alias(value);
}
inline c10::Scalar HeldArgument(CpuAliases& /*aliases*/,
                                const c10::Scalar& value) {
  return value;
}
inline bool HeldArgument(CpuAliases& /*aliases*/, bool value) { return value; }
inline std::optional<at::ScalarType> HeldArgument(
    CpuAliases& /*aliases*/, std::optional<at::ScalarType> value) {
  return value;
}
// An optional list of dimensions the closure owns, passed on as the
// OptionalIntArrayRef the impl function takes.
struct HeldDimensions {
  std::optional<std::vector<int64_t>> values;
  operator at::OptionalIntArrayRef() const {
    if (!values.has_value()) return std::nullopt;
    return at::IntArrayRef(*values);
  }
};
inline HeldDimensions HeldArgument(CpuAliases& /*aliases*/,
                                   at::OptionalIntArrayRef value) {
  if (!value.has_value()) return {};
  return {value->vec()};
}
// A list of dimensions the closure owns, passed on as an IntArrayRef.
struct HeldIntList {
  c10::SmallVector<int64_t, 4> values;
  operator at::IntArrayRef() const { return values; }
};
inline HeldIntList HeldArgument(CpuAliases& /*aliases*/,
                                at::IntArrayRef value) {
  return {c10::SmallVector<int64_t, 4>(value.begin(), value.end())};
}
inline int64_t HeldArgument(CpuAliases& /*aliases*/, int64_t value) {
  return value;
}
inline std::optional<int64_t> HeldArgument(CpuAliases& /*aliases*/,
                                           std::optional<int64_t> value) {
  return value;
}
inline at::ScalarType HeldArgument(CpuAliases& /*aliases*/,
                                   at::ScalarType value) {
  return value;
}
inline at::MemoryFormat HeldArgument(CpuAliases& /*aliases*/,
                                     at::MemoryFormat value) {
  return value;
}
// An optional tensor (a loss's class weights): its CPU alias, or none,
// passed on as the OptionalTensorRef the impl function takes.
struct HeldOptionalTensor {
  at::Tensor alias;  // undefined for none
  operator at::OptionalTensorRef() const {
    if (!alias.defined()) return {};
    return at::OptionalTensorRef(alias);
  }
};
inline HeldOptionalTensor HeldArgument(CpuAliases& aliases,
                                       at::OptionalTensorRef value) {
  if (!value.has_value()) return {};
  return {aliases.Alias(*value)};
}
// A list of tensors (cat's inputs): their CPU aliases, in a vector the
// closure owns (an ITensorListRef points into the caller's list), passed on
// as the ITensorListRef the impl function takes. Lists of up to four tensors,
// most calls', stay inside the work's record.
struct HeldTensorList {
  c10::SmallVector<at::Tensor, 4> aliases;
  operator at::ITensorListRef() const {
    return at::ITensorListRef(at::ArrayRef<at::Tensor>(aliases));
  }
};
inline HeldTensorList HeldArgument(CpuAliases& aliases,
                                   const at::ITensorListRef& value) {
  HeldTensorList held;
  held.aliases.reserve(value.size());
  for (const at::Tensor& tensor : value) {
    held.aliases.push_back(aliases.Alias(tensor));
  }
  return held;
}

// One call of the structured op whose CPU implementation is `Impl` (ATen's
// at::native::structured_<op>_out_cpu or structured_<op>_out, derived from
// the op's meta class), which has `kOutputs` outputs: call meta(...) with the
// openreg arguments, then Enqueue(...) with the impl function's arguments but
// the outputs.
template <typename Impl, size_t kOutputs = 1>
class StructuredCall final : public Impl {
 public:
  // One output: `given` is the out= or in-place tensor (null for kFresh).
  StructuredCall(OutputKind kind,
                 const at::Tensor* given) requires(kOutputs == 1)
      : outputs_{StructuredOutput(kind, given)} {}
  // Fresh results for every output.
  StructuredCall()
      : outputs_(FreshOutputs(std::make_index_sequence<kOutputs>())) {}
  // out= tensors for every output (topk's values and indices).
  explicit StructuredCall(const std::array<const at::Tensor*, kOutputs>& outs)
    requires(kOutputs > 1)
      : outputs_(GivenOutputs(outs, std::make_index_sequence<kOutputs>())) {}

  void set_output_raw_strided(int64_t index, at::IntArrayRef sizes,
                              at::IntArrayRef strides,
                              at::TensorOptions options) override {
    OutputAt(index).Set(sizes, strides, options, /*exact_strides=*/false);
  }
  void set_output_strided(int64_t index, at::IntArrayRef sizes,
                          at::IntArrayRef strides,
                          at::TensorOptions options) override {
    OutputAt(index).Set(sizes, strides, options, /*exact_strides=*/true);
  }
  const at::Tensor& maybe_get_output(int64_t index) override {
    return OutputAt(index).tensor();
  }

  bool accepted() const {
    for (const StructuredOutput& output : outputs_) {
      if (!output.accepted()) return false;
    }
    return true;
  }
  const at::Tensor& output(size_t index = 0) const {
    return outputs_[index].tensor();
  }

  // Enqueues the impl function on `args` and the outputs, on CPU aliases.
  // The closure keeps the openreg storages the stream does not order (so
  // the memory outlives the work) but not the openreg tensors, whose Python
  // objects may then be freed.
  template <typename... Args>
  void Enqueue(const char* op_name, const Args&... args) {
    const c10::DeviceIndex device = outputs_[0].tensor().device().index();
    const openreg_stream stream = CurrentDriverStream(device);
    // The impl function's arguments, made from the alias table the work
    // keeps; run while the record is built (below), so the call's arguments
    // and outputs are alive.
    auto hold = [&](CpuAliases& aliases) {
      return std::tuple_cat(
          std::make_tuple(HeldArgument(aliases, args)...),
          AliasesOfOutputs(aliases, std::make_index_sequence<kOutputs>()));
    };
    // Built in place in the work's record (Note [One allocation per piece of
    // work]), the alias table included: the op allocates once and moves
    // nothing (moving a table of inline arrays was ~150 instructions).
    auto record =
        MakeWorkRecord<ImplWork<std::invoke_result_t<decltype(hold)&,
                                                     CpuAliases&>>>(
            op_name, device, stream, stream, device, hold);
    // Borrowing: the call's arguments and outputs, and the aliases held for
    // the impl function, outlive this.
    record->work().aliases.ForgetOriginalTensors();
    EnqueueRecord(std::move(record));
  }

 private:
  template <size_t... kIndex>
  static std::array<StructuredOutput, kOutputs> FreshOutputs(
      std::index_sequence<kIndex...>) {
    return {((void)kIndex, StructuredOutput(OutputKind::kFresh, nullptr))...};
  }

  template <size_t... kIndex>
  static std::array<StructuredOutput, kOutputs> GivenOutputs(
      const std::array<const at::Tensor*, kOutputs>& outs,
      std::index_sequence<kIndex...>) {
    return {StructuredOutput(OutputKind::kOut, outs[kIndex])...};
  }

  template <size_t... kIndex>
  auto AliasesOfOutputs(CpuAliases& aliases, std::index_sequence<kIndex...>) {
    return std::make_tuple(aliases.Alias(outputs_[kIndex].tensor())...);
  }

  StructuredOutput& OutputAt(int64_t index) {
    TORCH_INTERNAL_ASSERT(index >= 0 && static_cast<size_t>(index) < kOutputs,
                          "openreg: a structured op asked for output ", index,
                          " of ", kOutputs);
    return outputs_[index];
  }

  // The impl function is a member of an abstract class; this makes one to
  // call it on (it reads no member).
  struct Runner final : Impl {
    const at::Tensor& maybe_get_output(int64_t /*index*/) override {
      TORCH_INTERNAL_ASSERT(false, "openreg: impl asked for a meta output");
      static const at::Tensor kNone;
      return kNone;
    }
  };

  // The enqueued work: the alias table that keeps the openreg storages
  // alive, and the impl function's arguments, which `hold` makes from it.
  template <typename Held>
  struct ImplWork {
    template <typename Hold>
    ImplWork(openreg_stream stream, c10::DeviceIndex device, Hold& hold)
        : aliases(DeviceMemoryAliases(stream,
                                      CpuAliases::Originals::kBorrowed)),
          held(hold(aliases)),
          device(device) {}
    void operator()() {
      const ScopedKernelMemoryOnDevice kernel_memory(
          device, aliases.ExecutionOffset(device));
      std::apply([](const auto&... values) { Runner().impl(values...); }, held);
    }

    CpuAliases aliases;
    Held held;
    c10::DeviceIndex device;
  };

  std::array<StructuredOutput, kOutputs> outputs_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_STRUCTURED_CALLS_H_
