#include "core/aten/layout_fallback.h"

#include <c10/core/impl/LocalDispatchKeySet.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/aten/argument_devices.h"
#include "core/aten/cpu_alias.h"
#include "core/aten/kernel_memory.h"
#include "core/aten/kernel_results.h"
#include "core/aten/layout_tensors.h"
#include "core/aten/op_facts.h"
#include "core/runtime/thread_state.h"
#include "core/torch_runtime/generator.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_work.h"

namespace openreg {
namespace {

// Ops whose arguments may be CPU tensors of any size, as on CUDA: copies
// between the devices (_to_copy of a nested CPU tensor to openreg comes here
// from BackendSelect), constructors that take a CPU tensor as a model, and
// nested tensor constructors that take nested sizes, strides and offsets,
// which live in host memory.
bool AcceptsCpuTensors(const OpFacts& facts) {
  const std::string& name = facts.name.name;
  return facts.accepts_cpu_tensors || name == "aten::copy_" ||
         name == "aten::_to_copy" ||
         name == "aten::copy_sparse_to_sparse_" ||
         name == "aten::empty_quantized" ||
         name == "aten::_nested_from_padded" ||
         name == "aten::_nested_view_from_buffer";
}

// The keys the CPU kernel is found under: the op's own keys below autograd,
// with the CPU backend for openreg's.
c10::DispatchKeySet CpuKeys(c10::DispatchKeySet keys) {
  return (keys & c10::after_ADInplaceOrView_keyset)
             .remove_backend(c10::BackendComponent::PrivateUse1Bit) |
         c10::DispatchKeySet(c10::BackendComponent::CPUBit);
}

// What the refusal of an op says about a layout: its name, and how to get a
// tensor of it to one the op takes.
struct LayoutWords {
  const char* name;
  const char* conversion;
};

// The words for the layout `functionality` gives, or none for a strided one.
std::optional<LayoutWords> WordsFor(c10::DispatchKey functionality) {
  constexpr const char* kToDense = "to_dense(), or another sparse layout";
  switch (functionality) {
    case c10::DispatchKey::Sparse:
      return LayoutWords{"sparse COO", kToDense};
    case c10::DispatchKey::SparseCsr:
      return LayoutWords{"sparse compressed (CSR, CSC, BSR, BSC)", kToDense};
    case c10::DispatchKey::Quantized:
      return LayoutWords{"quantized", "dequantize()"};
    case c10::DispatchKey::NestedTensor:
      return LayoutWords{"nested",
                         "to_padded_tensor(), or unbind() for the components"};
    default:
      return std::nullopt;
  }
}

class LayoutCall {
 public:
  LayoutCall(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
             torch::jit::Stack& stack)
      : op_(op),
        facts_(FactsOf(op)),
        cpu_keys_(CpuKeys(keys)),
        stack_(stack),
        aliases_(RuntimeOrThrow().execution_offsets()) {}

  void Run() {
    CheckCpuKernelExists();
    const size_t first = stack_.size() - facts_.argument_count;
    for (size_t i = 0; i < facts_.argument_count; ++i) {
      Check(stack_[first + i]);
    }
    if (!device_.has_value()) {
      device_ = static_cast<c10::DeviceIndex>(CurrentDeviceIndex());
    }
    CheckDeviceIndex(*device_);
    ReserveGenerators(first);
    torch::jit::Stack cpu;
    cpu.reserve(facts_.argument_count);
    for (size_t i = 0; i < facts_.argument_count; ++i) {
      cpu.push_back(ToCpu(first + i, facts_.written[i]));
    }
    const c10::DeviceIndex device = *device_;
    // The kernel sees the dispatch state of the calling thread (autograd
    // below it), as on the CPU, also on a driver's worker thread: sparse
    // kernels assert it.
    const c10::impl::LocalDispatchKeySet dispatch_state =
        c10::impl::tls_local_dispatch_key_set();
    RunOnCurrentStreamAndWait(device, facts_.schema_name, [&] {
      const c10::impl::ForceDispatchKeyGuard same_dispatch_state(
          dispatch_state);
      if (results_on_cpu_) {
        op_.redispatchBoxed(cpu_keys_, &cpu);
      } else {
        const ScopedKernelMemoryOnDevice kernel_memory(
            device, ExecutionOffsetOf(device));
        op_.redispatchBoxed(cpu_keys_, &cpu);
      }
      // Outside the routing: host memory for the quantizers and for the
      // metadata of new nested tensors.
      for (c10::IValue& result : cpu) {
        if (!result.isTensor()) continue;
        const at::Tensor& tensor = result.toTensor();
        if (tensor.is_quantized()) KeepQuantizerOnHost(tensor);
        if (tensor.is_nested() && OriginalOf(tensor) == nullptr) {
          result = WithNestedMetadataOnHost(tensor);
        }
      }
    });
    KernelResults results(device, aliases_);
    for (const auto& [original, alias] : written_) {
      if (HasLayoutParts(original)) {
        SyncWrittenCounterpart(original, alias, aliases_, results);
      } else {
        results.SyncWritten(original, alias);
      }
    }
    torch::jit::drop(stack_, facts_.argument_count);
    for (const c10::IValue& result : cpu) {
      stack_.push_back(FromCpu(result, results));
    }
  }

 private:
  // Refuses, with what to do instead, an op the CPU cannot run with these
  // layouts either: before anything is enqueued, so nothing fails later.
  void CheckCpuKernelExists() const {
    const c10::DispatchKey functionality = cpu_keys_.highestFunctionalityKey();
    const std::optional<LayoutWords> words = WordsFor(functionality);
    if (!words.has_value()) return;  // a strided op making another layout
    const c10::DispatchKey cpu_key = c10::toRuntimePerBackendFunctionalityKey(
        functionality, c10::BackendComponent::CPUBit);
    TORCH_CHECK_NOT_IMPLEMENTED(
        op_.hasComputedKernelForDispatchKey(cpu_key), facts_.schema_name,
        " is not supported for ", words->name,
        " tensors on openreg: openreg runs such ops with PyTorch's CPU "
        "kernels, and there is no ",
        cpu_key, " kernel for it. Convert the tensor first (",
        words->conversion, ") or run the op on the CPU.");
  }

  // Validates devices and notes the op's.
  void Check(const c10::IValue& value) {
    const OpFacts& facts = facts_;
    auto cpu_tensor_allowed = [&facts](const at::Tensor& tensor) {
      return (tensor.dim() == 0 && !HasLayoutParts(tensor)) ||
             AcceptsCpuTensors(facts);
    };
    CheckArgumentDevices(value, facts_.schema_name, cpu_tensor_allowed,
                         &device_);
  }

  // Random ops get a CPU generator seeded from the device's, as in the
  // strided fallback.
  void ReserveGenerators(size_t first) {
    for (size_t argument : facts_.generator_arguments) {
      c10::IValue& value = stack_[first + argument];
      if (value.isNone()) {
        value = ReserveKernelGenerator(DefaultGenerator(*device_));
      } else if (value.toGenerator().device().type() ==
                 c10::DeviceType::PrivateUse1) {
        value = ReserveKernelGenerator(value.toGenerator());
      }
    }
  }

  at::Tensor ToCpu(const at::Tensor& tensor, bool written) {
    if (!IsOpenReg(tensor)) return tensor;
    at::Tensor cpu = HasLayoutParts(tensor) ? CpuCounterpart(tensor, aliases_)
                                            : aliases_.Alias(tensor);
    if (HasLayoutParts(tensor)) counterparts_.emplace_back(tensor, cpu);
    if (tensor.is_nested()) {
      for (const at::Tensor& part : NestedMetadata(tensor)) {
        nested_metadata_.push_back(part.storage().unsafeGetStorageImpl());
      }
    }
    if (written) written_.emplace_back(tensor, cpu);
    return cpu;
  }

  // The sparse, quantized or nested argument whose counterpart `cpu` is, or
  // null.
  const at::Tensor* OriginalOf(const at::Tensor& cpu) const {
    for (const auto& [original, counterpart] : counterparts_) {
      if (counterpart.unsafeGetTensorImpl() == cpu.unsafeGetTensorImpl()) {
        return &original;
      }
    }
    return nullptr;
  }

  // Whether `cpu` is a nested argument's sizes, strides or offsets
  // (_nested_tensor_size, ...).
  bool IsNestedMetadata(const at::Tensor& cpu) const {
    for (const c10::StorageImpl* metadata : nested_metadata_) {
      if (cpu.storage().unsafeGetStorageImpl() == metadata) return true;
    }
    return false;
  }

  c10::IValue ToCpu(size_t position, bool written) {
    const c10::IValue& value = stack_[position];
    if (value.isTensor()) return ToCpu(value.toTensor(), written);
    if (value.isTensorList()) {
      c10::List<at::Tensor> converted;
      for (const at::Tensor& tensor : value.toTensorList()) {
        converted.push_back(ToCpu(tensor, written));
      }
      return converted;
    }
    if (value.isOptionalTensorList()) {
      c10::List<std::optional<at::Tensor>> converted;
      for (const std::optional<at::Tensor>& tensor :
           value.toOptionalTensorList()) {
        converted.push_back(tensor.has_value() ? std::optional<at::Tensor>(
                                                     ToCpu(*tensor, written))
                                               : std::nullopt);
      }
      return converted;
    }
    if (value.isDevice() &&
        value.toDevice().type() == c10::DeviceType::PrivateUse1) {
      // Constructors: the kernel creates on the CPU, in device memory.
      return c10::Device(c10::DeviceType::CPU);
    }
    // A constructor asked for a CPU result from an openreg model
    // (empty_quantized when a quantized tensor moves to the CPU).
    if (value.isDevice() && value.toDevice().is_cpu()) results_on_cpu_ = true;
    return value;
  }

  at::Tensor FromCpu(const at::Tensor& result, KernelResults& results) {
    if (!result.defined() || !result.device().is_cpu()) return result;
    if (const at::Tensor* original = OriginalOf(result)) return *original;
    if (results_on_cpu_) return result;
    if (HasLayoutParts(result)) {
      return OpenRegCounterpart(result, results, *device_);
    }
    // Host tensors on openreg as on CUDA.
    if (IsNestedMetadata(result)) return result;
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
  const c10::DispatchKeySet cpu_keys_;
  torch::jit::Stack& stack_;
  std::optional<c10::DeviceIndex> device_;
  // Whether the op makes CPU tensors (a CPU device argument).
  bool results_on_cpu_ = false;
  CpuAliases aliases_;
  // (openreg tensor, CPU counterpart) of the sparse and quantized arguments.
  std::vector<std::pair<at::Tensor, at::Tensor>> counterparts_;
  // (openreg tensor, CPU alias or counterpart) of the written arguments.
  std::vector<std::pair<at::Tensor, at::Tensor>> written_;
  // The storages of the nested arguments' metadata, which the arguments'
  // counterparts share.
  std::vector<const c10::StorageImpl*> nested_metadata_;
};

}  // namespace

void LayoutFallback(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                    torch::jit::Stack* stack) {
  LayoutCall(op, keys, *stack).Run();
}

void LayoutCopyFrom(const c10::OperatorHandle& /*op*/, c10::DispatchKeySet keys,
                    torch::jit::Stack* stack) {
  static const c10::OperatorHandle copy =
      c10::Dispatcher::singleton().findSchemaOrThrow("aten::copy_", "");
  // _copy_from(self, dst, non_blocking) is copy_(dst, self, non_blocking).
  std::swap((*stack)[stack->size() - 3], (*stack)[stack->size() - 2]);
  LayoutCall(copy, keys, *stack).Run();
}

}  // namespace openreg
