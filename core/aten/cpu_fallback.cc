#include "core/aten/cpu_fallback.h"

#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/contiguous.h>
#include <ATen/ops/copy.h>
#include <c10/core/DeviceGuard.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/aten/argument_devices.h"
#include "core/aten/cpu_alias.h"
#include "core/aten/device_memory_aliases.h"
#include "core/aten/kernel_memory.h"
#include "core/aten/kernel_results.h"
#include "core/aten/meta_shapes.h"
#include "core/aten/native_ops.h"
#include "core/aten/op_facts.h"
#include "core/aten/out_variants.h"
#include "core/aten/result_memory_plan.h"
#include "core/aten/results_into_outputs.h"
#include "core/runtime/runtime.h"
#include "core/runtime/thread_state.h"
#include "core/torch_runtime/device_allocator.h"
#include "core/torch_runtime/generator.h"
#include "core/torch_runtime/openreg_device.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_capture.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {
namespace {

constexpr c10::DispatchKeySet kCpuKeys(c10::DispatchKey::CPU);

// What an enqueued kernel owns: the op, its CPU-side stack and the aliases,
// which hold the storages of the openreg tensors the kernel touches that its
// stream does not order (Note [Asynchronous execution],
// device_memory_aliases.h). Sized inline for the few tensors most ops have,
// so a launch costs one heap allocation besides the stack.
struct KernelLaunch {
  KernelLaunch(const c10::OperatorHandle& op, const OpFacts& facts,
               CpuAliases aliases)
      : op(op),
        op_name(&facts.schema_name),
        aliases(std::move(aliases)),
        result_ordinals(&facts.result_ordinals) {}

  c10::OperatorHandle op;
  // The op's name, for error messages (the schema's, of the op called).
  const std::string* op_name;
  torch::jit::Stack stack;
  CpuAliases aliases;
  // Aliases of written arguments: the kernel must not move them elsewhere.
  absl::InlinedVector<at::Tensor, 2> written;
  // Aliases of preallocated outputs the functional kernel's results are
  // copied into (ops without an out= overload of their own, and ops leaving
  // some results undefined), one per result tensor; undefined for an
  // undefined result.
  std::vector<at::Tensor> copy_results_into;
  // Weak references to the openreg storages of those outputs (empty for an
  // undefined result), for a kernel that keeps a buffer in memory lent from
  // one (EndLoan). Held strongly, an output dropped at once would stay
  // allocated until its kernel ran; dropped, its memory serves only work
  // enqueued after this kernel, so it is still the kernel's to write (and
  // to lend), and work enqueued before the drop may read what it writes.
  std::vector<c10::weak_intrusive_ptr<c10::StorageImpl>> outputs;
  // The op's, for computing those results in their outputs' memory (Note
  // [Results computed in their outputs' memory]).
  ResultOrdinals* result_ordinals;
};

// Where a written argument's alias is before its kernel runs, and how its
// memory is read: the lazy conjugate and negative bits it shares with the
// openreg tensor.
struct Placement {
  void* data;
  size_t nbytes;
  c10::DimVector sizes;
  c10::DimVector strides;
  int64_t storage_offset;
  bool conj;
  bool neg;

  explicit Placement(const at::Tensor& alias)
      : data(alias.storage().mutable_data()),
        nbytes(alias.storage().nbytes()),
        sizes(alias.sizes().begin(), alias.sizes().end()),
        strides(alias.strides().begin(), alias.strides().end()),
        storage_offset(alias.storage_offset()),
        conj(alias.is_conj()),
        neg(alias.is_neg()) {}

  bool Holds(const at::Tensor& alias) const {
    return alias.storage().data() == data && alias.sizes() == sizes &&
           alias.strides() == strides &&
           alias.storage_offset() == storage_offset &&
           alias.is_conj() == conj && alias.is_neg() == neg;
  }

  // A CPU tensor over this memory, geometry and bits, in a storage of its
  // own: it keeps pointing at that memory after a kernel moved the alias's
  // storage.
  at::Tensor Tensor(const caffe2::TypeMeta dtype) const {
    c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes,
                         c10::DataPtr(data, c10::Device(c10::DeviceType::CPU)),
                         /*allocator=*/nullptr, /*resizable=*/false);
    at::Tensor fixed = at::detail::make_tensor<c10::TensorImpl>(
        std::move(storage), kCpuKeys, dtype);
    fixed.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides,
                                                       storage_offset);
    fixed._set_conj(conj);
    fixed._set_neg(neg);
    return fixed;
  }
};

using Placements = absl::InlinedVector<Placement, 2>;

// Where the launch's written arguments are before its kernel runs the first
// time.
Placements PlacementsOf(const KernelLaunch& launch) {
  Placements placements;
  for (const at::Tensor& alias : launch.written) placements.emplace_back(alias);
  return placements;
}

// Where the launch's functional kernel's results go.
KernelOutputs OutputsOf(const KernelLaunch& launch) {
  return {launch.copy_results_into, launch.outputs};
}

// Brings each result of a functional kernel into the output the caller
// holds (results_into_outputs.h).
void PlaceLaunchResults(KernelLaunch& launch, ResultMemoryPlan& plan) {
  absl::InlinedVector<at::Tensor, 3> results;
  for (const c10::IValue& result : launch.stack) {
    if (result.isTensor()) {
      results.push_back(result.toTensor());
    } else if (result.isTensorList()) {
      for (const at::Tensor& tensor : result.toTensorList()) {
        results.push_back(tensor);
      }
    }
  }
  PlaceResults(results, OutputsOf(launch), plan, *launch.op_name);
}

// Runs the launch's kernel and leaves its results at `placements`, where the
// caller expects them. A captured launch runs once per replay with the
// placements taken at capture: a kernel that moved an alias on an earlier
// run finds it moved, and the results still reach the planned memory.
void RunKernel(KernelLaunch& launch, const Placements& placements,
               c10::DeviceIndex device, intptr_t execution_offset) {
  std::optional<ResultMemoryPlan> plan;
  if (!launch.copy_results_into.empty()) {
    plan.emplace(*launch.result_ordinals);
    OfferOutputMemory(OutputsOf(launch), *plan);
  }
  {
    const ScopedKernelMemoryOnDevice kernel_memory(device, execution_offset);
    const ScopedResultMemoryPlan lend(plan.has_value() ? &*plan : nullptr);
    launch.op.redispatchBoxed(kCpuKeys, &launch.stack);
  }
  // Some out= kernels give their output another layout (max_unpool2d
  // restrides it to the input's memory format) or use it as scratch space of
  // another shape, which moves it to new memory, before writing the result
  // (huber_loss with a reduction), or flip its conjugate bit instead of
  // conjugating the values (linalg_lu_solve with left=False). The caller
  // already holds the result with its planned layout, place and bits: copy
  // it there.
  for (size_t i = 0; i < launch.written.size(); ++i) {
    const at::Tensor& written = launch.written[i];
    const Placement& placement = placements[i];
    if (placement.Holds(written)) continue;
    const at::Tensor planned = placement.Tensor(written.dtype());
    const bool moved = written.storage().data() != placement.data;
    TORCH_CHECK(written.sizes() == planned.sizes(),
                "openreg internal error: ", *launch.op_name,
                " changed the shape of a written argument from ",
                planned.sizes(), " to ", written.sizes(),
                " although its shape was known before it ran");
    // In place, the values must leave the memory they are copied into first.
    planned.copy_(moved ? written : written.clone());
    // A graph replays the kernel on this alias: it must start as planned.
    written._set_conj(placement.conj);
    written._set_neg(placement.neg);
  }
  if (plan.has_value()) PlaceLaunchResults(launch, *plan);
}

// A new openreg tensor for `spec`, or an undefined tensor for an undefined
// result. A 4-d or 5-d result takes the channels-last strides of its rank
// when `format` asks for them.
at::Tensor ResultFor(const TensorSpec& spec, c10::DeviceIndex device,
                     c10::MemoryFormat format) {
  if (!spec.defined) return at::Tensor();
  const size_t rank = spec.sizes.size();
  const bool channels_last =
      (format == c10::MemoryFormat::ChannelsLast && rank == 4) ||
      (format == c10::MemoryFormat::ChannelsLast3d && rank == 5);
  if (!channels_last) return EmptyOnDevice(spec, device);
  TensorSpec laid_out = spec;
  laid_out.strides = rank == 4 ? c10::get_channels_last_strides_2d(spec.sizes)
                               : c10::get_channels_last_strides_3d(spec.sizes);
  return EmptyOnDevice(laid_out, device);
}

class FallbackCall {
 public:
  // `results_format`: the memory format of fresh results, when the caller
  // knows the CPU kernel's to differ from the meta kernel's (Preserve: the
  // meta kernel's strides).
  FallbackCall(const c10::OperatorHandle& op, torch::jit::Stack& stack,
               c10::MemoryFormat results_format)
      : op_(op),
        facts_(FactsOf(op)),
        stack_(stack),
        results_format_(results_format) {}

  void Run() {
    Prepare();
    const auto arguments = torch::jit::last(stack_, facts_.argument_count);
    switch (facts_.result_kind) {
      case ResultKind::kWrittenArguments:
        // A kernel that resizes `self` runs at once: the caller gets `self`
        // back with the shape the kernel gave it.
        if (!facts_.resizes_self && EnqueueWritingArguments(arguments)) {
          return;
        }
        break;
      case ResultKind::kFreshTensors:
        if (EnqueueWithFreshOutputs(arguments)) return;
        break;
      case ResultKind::kOther:
        break;
    }
    RunAndWait();
  }

 private:
  size_t FirstArgument() const { return stack_.size() - facts_.argument_count; }

  // Validates devices, picks the op's device and reserves random state.
  void Prepare() {
    const size_t first = FirstArgument();
    // CPU scalars take part in device ops as on CUDA, and index tensors may
    // live on the CPU; any other CPU tensor is a device mix-up.
    const bool accepts_cpu_tensors = facts_.accepts_cpu_tensors;
    auto cpu_tensor_allowed = [accepts_cpu_tensors](const at::Tensor& tensor) {
      return tensor.dim() == 0 || accepts_cpu_tensors;
    };
    for (size_t i = 0; i < facts_.argument_count; ++i) {
      CheckArgumentDevices(stack_[first + i], facts_.schema_name,
                           cpu_tensor_allowed, &device_);
    }
    if (!device_.has_value()) {
      device_ = static_cast<c10::DeviceIndex>(CurrentDeviceIndex());
    }
    runtime_ = &RuntimeForDevice(*device_);
    for (size_t argument : facts_.generator_arguments) {
      c10::IValue& value = stack_[first + argument];
      const at::Generator generator =
          value.isNone() ? DefaultGenerator(*device_) : value.toGenerator();
      TORCH_CHECK(generator.device().type() == c10::DeviceType::PrivateUse1,
                  facts_.schema_name,
                  " on openreg needs an openreg "
                  "generator, got a generator for ",
                  generator.device(),
                  ". Create it with torch.Generator(device='openreg').");
      value = ReserveKernelGenerator(generator);
    }
  }

  // The CPU-side stack for the op: aliases for openreg tensors, the CPU for
  // an openreg device argument, everything else as is.
  torch::jit::Stack ToCpuStack(c10::ArrayRef<c10::IValue> arguments,
                               KernelLaunch& launch) {
    torch::jit::Stack cpu;
    // Room for the out= arguments an out variant appends.
    cpu.reserve(arguments.size() + 2);
    for (size_t i = 0; i < arguments.size(); ++i) {
      cpu.push_back(ToCpu(arguments[i], facts_.written[i], launch));
    }
    return cpu;
  }

  at::Tensor ToCpu(const at::Tensor& tensor, bool written, KernelLaunch& launch) {
    if (!IsOpenReg(tensor)) return tensor;
    at::Tensor alias = launch.aliases.Alias(tensor);
    if (written) launch.written.push_back(alias);
    return alias;
  }

  c10::IValue ToCpu(const c10::IValue& value, bool written,
                    KernelLaunch& launch) {
    if (value.isTensor()) return ToCpu(value.toTensor(), written, launch);
    if (value.isTensorList()) {
      c10::List<at::Tensor> converted;
      for (const at::Tensor& tensor : value.toTensorList()) {
        converted.push_back(ToCpu(tensor, written, launch));
      }
      return converted;
    }
    if (value.isOptionalTensorList()) {
      c10::List<std::optional<at::Tensor>> converted;
      for (const std::optional<at::Tensor>& tensor :
           value.toOptionalTensorList()) {
        converted.push_back(
            tensor.has_value()
                ? std::optional<at::Tensor>(ToCpu(*tensor, written, launch))
                : std::nullopt);
      }
      return converted;
    }
    if (value.isDevice() &&
        value.toDevice().type() == c10::DeviceType::PrivateUse1) {
      // Factory ops: the kernel creates on the CPU, in device memory.
      return c10::Device(c10::DeviceType::CPU);
    }
    return value;
  }

  // A launch of `op` on the device's current stream, which becomes stream_.
  // Its aliases hold only the storages the work must own: the caller keeps
  // its arguments, and with them their memory, until Enqueue.
  std::unique_ptr<KernelLaunch> NewLaunch(const c10::OperatorHandle& op) {
    stream_ = CurrentDriverStream(*device_);
    return std::make_unique<KernelLaunch>(
        op, facts_, DeviceMemoryAliases(stream_, CpuAliases::Originals::kHeld));
  }

  // Enqueues the launch NewLaunch made on stream_.
  void Enqueue(std::unique_ptr<KernelLaunch> launch) {
    const c10::DeviceIndex device = *device_;
    const intptr_t execution_offset = runtime_->execution_offset(device);
    launch->aliases.ForgetOriginalTensors();
    const openreg_stream stream = stream_;
    if (IsCapturing(stream)) {
      // A graph runs the kernel on every replay, and the boxed call consumes
      // its stack: each run starts from a copy of the arguments.
      torch::jit::Stack arguments = launch->stack;
      Placements planned = PlacementsOf(*launch);
      EnqueueWork(device, stream, facts_.schema_name,
                  [launch = std::move(launch), device, execution_offset,
                   arguments, planned = std::move(planned)]() {
                    launch->stack = arguments;
                    RunKernel(*launch, planned, device, execution_offset);
                  });
      return;
    }
    EnqueueWork(device, stream, facts_.schema_name,
                [launch = std::move(launch), device, execution_offset]() {
                  RunKernel(*launch, PlacementsOf(*launch), device,
                            execution_offset);
                });
  }

  // Whether some out= argument may need resizing. One that is also an input
  // (out=self: how ATen runs every structured in-place op) never does.
  bool HasOutArgumentsToSize(c10::ArrayRef<c10::IValue> arguments) const {
    if (!facts_.has_out_arguments) return false;
    for (size_t i = 0; i < arguments.size(); ++i) {
      if (!facts_.is_out[i]) continue;
      if (!arguments[i].isTensor()) return true;
      const at::Tensor& out = arguments[i].toTensor();
      bool is_input = false;
      for (size_t j = 0; j < arguments.size() && !is_input; ++j) {
        is_input = !facts_.is_out[j] && arguments[j].isTensor() &&
                   arguments[j].toTensor().is_same(out);
      }
      if (!is_input) return true;
    }
    return false;
  }

  // In-place and out= ops: the results are the written arguments.
  bool EnqueueWritingArguments(c10::ArrayRef<c10::IValue> arguments) {
    if (HasOutArgumentsToSize(arguments)) {
      // out= arguments of the wrong shape are resized here, before the
      // kernel runs, so the kernel never has to.
      std::shared_ptr<const ResultSpecs> specs =
          InferResultSpecs(op_, arguments);
      if (specs == nullptr) return false;
      size_t next = 0;
      for (size_t i = 0; i < arguments.size(); ++i) {
        if (!facts_.is_out[i] || !arguments[i].isTensor()) continue;
        const at::Tensor& out = arguments[i].toTensor();
        const TensorSpec& spec = specs->out_arguments.at(next++);
        if (!IsOpenReg(out)) return false;
        if (out.sizes() != c10::IntArrayRef(spec.sizes)) {
          Resize(out, spec.sizes, std::nullopt);
        }
      }
    }
    auto launch = NewLaunch(op_);
    launch->stack = ToCpuStack(arguments, *launch);
    // The results, known now: each is the argument sharing its alias set.
    absl::InlinedVector<c10::IValue, 2> results;
    for (size_t argument : facts_.result_arguments) {
      results.push_back(arguments[argument]);
    }
    Enqueue(std::move(launch));
    torch::jit::drop(stack_, arguments.size());
    for (c10::IValue& result : results) stack_.push_back(std::move(result));
    return true;
  }

  // Ops with new results: allocate them now from the meta shapes, and let
  // the kernel write into them.
  bool EnqueueWithFreshOutputs(c10::ArrayRef<c10::IValue> arguments) {
    std::shared_ptr<const ResultSpecs> specs = InferResultSpecs(op_, arguments);
    if (specs == nullptr) return false;
    absl::InlinedVector<c10::IValue, 2> results;
    absl::InlinedVector<at::Tensor, 2> outputs;
    bool all_defined = true;
    const auto& returns = op_.schema().returns();
    for (size_t i = 0; i < returns.size(); ++i) {
      if (returns[i].real_type()->kind() == c10::TypeKind::ListType) {
        c10::List<at::Tensor> list;
        for (const TensorSpec& spec : specs->returns.at(i)) {
          outputs.push_back(ResultFor(spec, *device_, results_format_));
          all_defined &= spec.defined;
          list.push_back(outputs.back());
        }
        results.emplace_back(std::move(list));
      } else {
        const TensorSpec& spec = specs->returns.at(i).at(0);
        outputs.push_back(ResultFor(spec, *device_, results_format_));
        all_defined &= spec.defined;
        results.emplace_back(outputs.back());
      }
    }
    // An out= overload wants every output; an op leaving some undefined, or
    // with no out= overload of its own, runs its functional kernel, and the
    // defined results are placed in the outputs (PlaceLaunchResults).
    const std::optional<c10::OperatorHandle> out_variant =
        all_defined ? facts_.out_variant : std::nullopt;
    auto launch = NewLaunch(out_variant.value_or(op_));
    launch->stack = ToCpuStack(arguments, *launch);
    if (out_variant.has_value()) {
      for (const c10::IValue& result : results) {
        launch->stack.push_back(ToCpu(result, /*written=*/true, *launch));
      }
    } else {
      for (const at::Tensor& output : outputs) {
        launch->copy_results_into.push_back(
            output.defined() ? launch->aliases.Alias(output) : at::Tensor());
        launch->outputs.push_back(
            output.defined()
                ? output.storage().getWeakStorageImpl()
                : c10::weak_intrusive_ptr<c10::StorageImpl>(
                      c10::intrusive_ptr<c10::StorageImpl>()));
      }
    }
    Enqueue(std::move(launch));
    torch::jit::drop(stack_, arguments.size());
    for (c10::IValue& result : results) stack_.push_back(std::move(result));
    return true;
  }

  // Everything else: run the kernel, wait, and map its results back.
  void RunAndWait() {
    const size_t count = facts_.argument_count;
    const auto arguments = torch::jit::last(stack_, count);
    // The kernel runs before this returns: the aliases may hold everything.
    KernelLaunch launch(op_, facts_, CpuAliases(runtime_->execution_offsets()));
    std::vector<std::pair<at::Tensor, at::Tensor>> written;  // (openreg, alias)
    launch.stack = ToCpuStack(arguments, launch);
    for (size_t i = 0; i < count; ++i) {
      if (facts_.written[i] && arguments[i].isTensor() &&
          IsOpenReg(arguments[i].toTensor())) {
        written.emplace_back(arguments[i].toTensor(),
                             launch.stack[i].toTensor());
      }
    }
    const c10::DeviceIndex device = *device_;
    const intptr_t execution_offset = runtime_->execution_offset(device);
    RunOnCurrentStreamAndWait(device, facts_.schema_name, [&] {
      const ScopedKernelMemoryOnDevice kernel_memory(device, execution_offset);
      launch.op.redispatchBoxed(kCpuKeys, &launch.stack);
    });
    KernelResults results(device, launch.aliases);
    SyncWrittenArguments(written, results);
    torch::jit::drop(stack_, count);
    for (const c10::IValue& result : launch.stack) {
      stack_.push_back(FromCpu(result, results));
    }
  }

  // Brings arguments the kernel wrote (and maybe grew) back into their
  // openreg tensors.
  void SyncWrittenArguments(
      const std::vector<std::pair<at::Tensor, at::Tensor>>& written,
      KernelResults& results) {
    for (const auto& [original, alias] : written) {
      results.SyncWritten(original, alias);
    }
  }

  at::Tensor FromCpu(const at::Tensor& result, KernelResults& results) {
    // Ops whose results have another layout than their arguments run in
    // layout_fallback.h; the list there must name every such op.
    TORCH_CHECK(!result.defined() ||
                    (result.layout() == at::kStrided && !result.is_quantized()),
                "openreg internal error: ", facts_.schema_name,
                " returned a tensor of layout ", result.layout(),
                (result.is_quantized() ? " (quantized)" : ""),
                " from strided arguments, and openreg does not route it "
                "through its sparse and quantized fallback. Please report "
                "the op; until then run it on the CPU.");
    return results.FromCpu(result);
  }

  c10::IValue FromCpu(const c10::IValue& result, KernelResults& results) {
    if (result.isTensor()) return FromCpu(result.toTensor(), results);
    if (result.isTensorList()) {
      c10::List<at::Tensor> converted;
      for (const at::Tensor& tensor : result.toTensorList()) {
        converted.push_back(FromCpu(tensor, results));
      }
      return converted;
    }
    return result;
  }

  const c10::OperatorHandle& op_;
  const OpFacts& facts_;
  torch::jit::Stack& stack_;
  const c10::MemoryFormat results_format_;
  std::optional<c10::DeviceIndex> device_;
  // The runtime, once Prepare checked the device.
  const Runtime* runtime_ = nullptr;
  // The stream of the launch NewLaunch made.
  openreg_stream stream_ = nullptr;
};

}  // namespace

void CpuFallback(const c10::OperatorHandle& op, c10::DispatchKeySet /*keys*/,
                 torch::jit::Stack* stack) {
  RunCpuKernelOf(op, stack);
}

void RunCpuKernelOf(const c10::OperatorHandle& cpu_op,
                    torch::jit::Stack* stack) {
  FallbackCall(cpu_op, *stack, c10::MemoryFormat::Preserve).Run();
}

void RunCpuKernelOf(const c10::OperatorHandle& cpu_op, torch::jit::Stack* stack,
                    c10::MemoryFormat results_format) {
  FallbackCall(cpu_op, *stack, results_format).Run();
}

}  // namespace openreg
