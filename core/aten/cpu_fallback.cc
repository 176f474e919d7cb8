#include "core/aten/cpu_fallback.h"

#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/contiguous.h>
#include <c10/core/DeviceGuard.h>

#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/container/flat_hash_map.h"
#include "core/aten/cpu_alias.h"
#include "core/aten/kernel_memory.h"
#include "core/aten/stream_execution.h"
#include "core/runtime/device_allocator.h"
#include "core/runtime/generator.h"
#include "core/runtime/runtime.h"
#include "core/runtime/thread_state.h"
#include "core/runtime/torch_status.h"
#include "core/runtime/torch_stream.h"

namespace openreg {
namespace {

constexpr c10::DispatchKeySet kOpenRegKeys(c10::DispatchKey::PrivateUse1);

bool IsOpenReg(const at::Tensor& tensor) {
  return tensor.defined() &&
         tensor.device().type() == c10::DeviceType::PrivateUse1;
}

bool IsOptionalOf(const c10::TypePtr& type, c10::TypeKind kind) {
  if (type->kind() == kind) return true;
  if (auto optional = type->cast<c10::OptionalType>()) {
    return optional->getElementType()->kind() == kind;
  }
  return false;
}

// Copies a CPU result into new memory on `device`: for results a kernel
// allocated outside the routing of kernel_memory.h (e.g. on a worker thread).
at::Tensor NewDeviceTensorFrom(const at::Tensor& cpu, c10::DeviceIndex device) {
  const at::Tensor source =
      cpu.is_non_overlapping_and_dense() ? cpu : cpu.contiguous();
  const c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, device));
  at::Tensor result = at::detail::empty_strided_generic(
      source.sizes(), source.strides(), &GetDeviceAllocator(), kOpenRegKeys,
      source.scalar_type());
  const size_t bytes = static_cast<size_t>(source.numel()) * source.itemsize();
  if (bytes > 0) {
    // Pageable source: the driver copies it before returning.
    ThrowIfError(RuntimeForDevice(device).driver().MemcpyAsync(
        result.data_ptr(), source.data_ptr(), bytes,
        OPENREG_MEMCPY_HOST_TO_DEVICE, CurrentDriverStream(device)));
  }
  return result;
}

// Everything one fallback call needs to carry from arguments to results.
class FallbackCall {
 public:
  explicit FallbackCall(const c10::OperatorHandle& op) : op_(op) {}

  // Replaces openreg arguments on the stack with CPU equivalents.
  void PrepareArguments(torch::jit::Stack& stack);
  // Runs the CPU kernel on the current stream of the op's device.
  void Run(torch::jit::Stack& stack);
  // Replaces CPU results on the stack with openreg tensors.
  void MapResults(torch::jit::Stack& stack);

 private:
  void NoteDevice(c10::DeviceIndex device, const char* what);
  c10::IValue ToCpu(const c10::IValue& value, bool written);
  at::Tensor ToCpu(const at::Tensor& tensor, bool written);
  at::Tensor FromCpu(const at::Tensor& result);
  c10::IValue FromCpu(const c10::IValue& result);
  // `result` as an openreg tensor over the device memory the kernel allocated
  // it in, or nullopt if the kernel allocated it in host memory.
  std::optional<at::Tensor> Adopt(const at::Tensor& result);
  // Brings arguments the kernel wrote back into their openreg tensors.
  void SyncWrittenArguments();

  const c10::OperatorHandle& op_;
  std::optional<c10::DeviceIndex> device_;
  CpuAliases aliases_;
  std::vector<std::pair<at::Tensor, at::Tensor>> written_;  // (openreg, alias)
  std::vector<size_t> generator_slots_;
  std::optional<at::Generator> generator_;
  // Kernel-allocated CPU storages already adopted, so results sharing one
  // storage keep sharing it.
  absl::flat_hash_map<const c10::StorageImpl*, c10::Storage> adopted_;
};

void FallbackCall::NoteDevice(c10::DeviceIndex device, const char* what) {
  if (!device_.has_value()) {
    device_ = device;
    return;
  }
  TORCH_CHECK(*device_ == device,
              "Expected all tensors to be on the same device, but found at "
              "least two devices, openreg:", static_cast<int>(*device_),
              " and openreg:", static_cast<int>(device), " (", what, " of ",
              op_.schema().name(), "). Move them to one device with .to().");
}

at::Tensor FallbackCall::ToCpu(const at::Tensor& tensor, bool written) {
  if (!IsOpenReg(tensor)) {
    // CPU scalars take part in device ops as on CUDA, and index tensors may
    // live on the CPU; any other CPU tensor is a device mix-up.
    TORCH_CHECK(!tensor.defined() || !tensor.device().is_cpu() ||
                    tensor.dim() == 0 ||
                    absl::StrContains(op_.schema().name(), "index"),
                "Expected all tensors to be on the same device, but found a "
                "CPU tensor of shape ", tensor.sizes(), " in ",
                op_.schema().name(),
                " on openreg. Move it with .to('openreg') first.");
    return tensor;
  }
  NoteDevice(tensor.device().index(), "tensor argument");
  at::Tensor alias = aliases_.Alias(tensor);
  if (written) written_.emplace_back(tensor, alias);
  return alias;
}

c10::IValue FallbackCall::ToCpu(const c10::IValue& value, bool written) {
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
    for (const std::optional<at::Tensor>& tensor : value.toOptionalTensorList()) {
      converted.push_back(tensor.has_value()
                              ? std::optional<at::Tensor>(ToCpu(*tensor, written))
                              : std::nullopt);
    }
    return converted;
  }
  if (value.isDevice() && value.toDevice().type() == c10::DeviceType::PrivateUse1) {
    // Factory ops: create on the CPU, then move the result to the device.
    const c10::Device device = value.toDevice();
    NoteDevice(device.has_index() ? device.index()
                                  : static_cast<c10::DeviceIndex>(CurrentDeviceIndex()),
               "device argument");
    return c10::Device(c10::DeviceType::CPU);
  }
  return value;
}

void FallbackCall::PrepareArguments(torch::jit::Stack& stack) {
  const auto& arguments = op_.schema().arguments();
  const size_t first = stack.size() - arguments.size();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::Argument& argument = arguments[i];
    c10::IValue& value = stack[first + i];
    if (IsOptionalOf(argument.real_type(), c10::TypeKind::GeneratorType)) {
      generator_slots_.push_back(first + i);
      continue;
    }
    const bool written =
        argument.alias_info() != nullptr && argument.alias_info()->isWrite();
    value = ToCpu(value, written);
  }
  if (!device_.has_value()) {
    device_ = static_cast<c10::DeviceIndex>(CurrentDeviceIndex());
  }
  RuntimeForDevice(*device_);
  for (size_t slot : generator_slots_) {
    c10::IValue& value = stack[slot];
    at::Generator generator = value.isNone() ? DefaultGenerator(*device_)
                                             : value.toGenerator();
    TORCH_CHECK(generator.device().type() == c10::DeviceType::PrivateUse1,
                op_.schema().name(), " on openreg needs an openreg generator, "
                "got a generator for ", generator.device(),
                ". Create it with torch.Generator(device='openreg').");
    value = static_cast<GeneratorImpl*>(generator.unsafeGetGeneratorImpl())
                ->cpu_generator();
    generator_ = std::move(generator);
  }
}

void FallbackCall::Run(torch::jit::Stack& stack) {
  const c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, *device_));
  std::unique_lock<std::mutex> generator_lock;
  if (generator_.has_value()) {
    // The device generator's state must not change under the kernel.
    generator_lock = std::unique_lock<std::mutex>(generator_->mutex());
  }
  RunOnCurrentStreamAndWait(*device_, [&] {
    const ScopedKernelMemoryOnDevice kernel_memory(*device_);
    op_.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &stack);
  });
}

std::optional<at::Tensor> FallbackCall::Adopt(const at::Tensor& result) {
  const c10::StorageImpl* key = result.storage().unsafeGetStorageImpl();
  auto it = adopted_.find(key);
  if (it == adopted_.end()) {
    c10::Storage cpu_storage = result.storage();
    c10::Storage adopted;
    if (!AdoptKernelStorage(cpu_storage, *device_, &adopted)) return std::nullopt;
    it = adopted_.emplace(key, std::move(adopted)).first;
  }
  at::Tensor tensor = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(it->second), kOpenRegKeys, result.dtype());
  tensor.unsafeGetTensorImpl()->set_sizes_and_strides(
      result.sizes(), result.strides(), result.storage_offset());
  return tensor;
}

void FallbackCall::SyncWrittenArguments() {
  for (auto& [original, alias] : written_) {
    if (alias.storage().data() != original.storage().data()) {
      // The kernel had to grow an output and allocated new memory for it.
      std::optional<at::Tensor> adopted = Adopt(alias);
      at::Tensor moved =
          adopted.has_value() ? *adopted : NewDeviceTensorFrom(alias, *device_);
      original.unsafeGetTensorImpl()->set_storage_keep_dtype(moved.storage());
      original.unsafeGetTensorImpl()->set_sizes_and_strides(
          moved.sizes(), moved.strides(), moved.storage_offset());
    } else if (alias.sizes() != original.sizes() ||
               alias.strides() != original.strides() ||
               alias.storage_offset() != original.storage_offset()) {
      original.unsafeGetTensorImpl()->set_sizes_and_strides(
          alias.sizes(), alias.strides(), alias.storage_offset());
    }
  }
}

at::Tensor FallbackCall::FromCpu(const at::Tensor& result) {
  if (!result.defined() || !result.device().is_cpu()) return result;
  if (const at::Tensor* original = aliases_.OriginalOf(result)) return *original;
  if (const c10::Storage* storage = aliases_.OriginalStorageOf(result);
      storage != nullptr && result.storage().data() == storage->data()) {
    // A view of an argument: the same geometry over the openreg storage.
    at::Tensor view = at::detail::make_tensor<c10::TensorImpl>(
        c10::TensorImpl::VIEW, c10::Storage(*storage), kOpenRegKeys,
        result.dtype());
    view.unsafeGetTensorImpl()->set_sizes_and_strides(
        result.sizes(), result.strides(), result.storage_offset());
    return view;
  }
  if (std::optional<at::Tensor> adopted = Adopt(result)) return *adopted;
  return NewDeviceTensorFrom(result, *device_);
}

c10::IValue FallbackCall::FromCpu(const c10::IValue& result) {
  if (result.isTensor()) return FromCpu(result.toTensor());
  if (result.isTensorList()) {
    c10::List<at::Tensor> converted;
    for (const at::Tensor& tensor : result.toTensorList()) {
      converted.push_back(FromCpu(tensor));
    }
    return converted;
  }
  return result;
}

void FallbackCall::MapResults(torch::jit::Stack& stack) {
  SyncWrittenArguments();
  const size_t returns = op_.schema().returns().size();
  for (size_t i = stack.size() - returns; i < stack.size(); ++i) {
    stack[i] = FromCpu(stack[i]);
  }
}

}  // namespace

void CpuFallback(const c10::OperatorHandle& op, c10::DispatchKeySet /*keys*/,
                 torch::jit::Stack* stack) {
  RunCpuKernelOf(op, stack);
}

void RunCpuKernelOf(const c10::OperatorHandle& cpu_op,
                    torch::jit::Stack* stack) {
  FallbackCall call(cpu_op);
  call.PrepareArguments(*stack);
  call.Run(*stack);
  call.MapResults(*stack);
}

}  // namespace openreg
