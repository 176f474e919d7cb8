#include "core/compile/compiled_kernel_launch.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_work.h"

namespace openreg {
namespace {

const char* KindName(char kind) {
  switch (kind) {
    case 'P':
      return "a tensor";
    case 'M':
      return "an openreg tensor";
    case 'I':
      return "an int";
    case 'F':
      return "a float";
    default:
      return "an unknown kind";
  }
}

const char* ValueName(const CompiledKernelValue& value) {
  if (std::holds_alternative<at::Tensor>(value)) return "a tensor";
  if (std::holds_alternative<int64_t>(value)) return "an int";
  return "a float";
}

// What the launched work owns: the argument slots, the storages behind the
// pointers in them and the copies of CPU scalars.
struct CompiledKernelWork {
  CompiledKernelEntry entry;
  std::vector<OpenRegKernelArgument> arguments;
  std::vector<c10::Storage> storages;
  std::vector<at::Tensor> cpu_scalars;
};

}  // namespace

absl::Status LaunchCompiledKernel(CompiledKernelEntry entry,
                                  absl::string_view kernel_name,
                                  absl::string_view signature,
                                  const std::vector<CompiledKernelValue>& values) {
  if (entry == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compiled kernel ", kernel_name, ": the entry point is null; expected "
        "the address of its openreg_kernel_entry"));
  }
  if (values.size() != signature.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compiled kernel ", kernel_name, " takes ", signature.size(),
        " arguments (", signature, "), got ", values.size()));
  }
  CompiledKernelWork work{entry, {}, {}, {}};
  work.arguments.resize(values.size());
  std::optional<c10::DeviceIndex> device;
  // The kernel runs on the driver's thread and gets execution addresses
  // (docs/memory.md, "Device memory the host cannot touch").
  intptr_t execution_offset = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const CompiledKernelValue& value = values[i];
    OpenRegKernelArgument& slot = work.arguments[i];
    const char kind = signature[i];
    const auto mismatch = [&] {
      return absl::InvalidArgumentError(absl::StrCat(
          "compiled kernel ", kernel_name, ": argument ", i, " must be ",
          KindName(kind), ", got ", ValueName(value)));
    };
    if (kind == 'P' || kind == 'M') {
      const at::Tensor* tensor = std::get_if<at::Tensor>(&value);
      if (tensor == nullptr || !tensor->defined()) return mismatch();
      if (kind == 'P' && tensor->device().is_cpu() && tensor->numel() == 1) {
        // Read now, on the calling thread (CPU scalars above).
        work.cpu_scalars.push_back(tensor->clone());
        slot.pointer = work.cpu_scalars.back().data_ptr();
        continue;
      }
      if (tensor->device().type() != c10::DeviceType::PrivateUse1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "compiled kernel ", kernel_name, ": argument ", i,
            kind == 'P' ? " must be an openreg tensor or a CPU scalar"
                        : " is written by the kernel and must be an openreg tensor",
            ", got a tensor of ", tensor->numel(), " elements on ",
            tensor->device().str(), "; move it with .to('openreg')"));
      }
      if (device.has_value() && *device != tensor->device().index()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "compiled kernel ", kernel_name, ": all tensors must be on one "
            "device; argument ", i, " is on openreg:",
            tensor->device().index(), ", earlier ones on openreg:", *device));
      }
      if (!device.has_value()) {
        execution_offset = ExecutionOffsetOf(tensor->device().index());
      }
      device = tensor->device().index();
      // Pointer arithmetic only: device memory is not touched here. A
      // pointer the kernel only reads takes the const path, which leaves a
      // copy-on-write storage shared instead of copying it here.
      if (tensor->numel() == 0) {
        slot.pointer = nullptr;
      } else if (kind == 'P') {
        slot.pointer =
            static_cast<char*>(const_cast<void*>(tensor->const_data_ptr())) +
            execution_offset;
      } else {
        slot.pointer =
            static_cast<char*>(tensor->mutable_data_ptr()) + execution_offset;
      }
      work.storages.push_back(tensor->storage());
    } else if (kind == 'I') {
      const int64_t* integer = std::get_if<int64_t>(&value);
      if (integer == nullptr) return mismatch();
      slot.integer = *integer;
    } else if (kind == 'F') {
      if (const double* floating = std::get_if<double>(&value)) {
        slot.floating = *floating;
      } else if (const int64_t* integer = std::get_if<int64_t>(&value)) {
        slot.floating = static_cast<double>(*integer);
      } else {
        return mismatch();
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "compiled kernel ", kernel_name, ": signature '", signature,
          "' has '", std::string(1, kind), "' at ", i,
          "; expected only 'P', 'M', 'I' or 'F'"));
    }
  }
  if (!device.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compiled kernel ", kernel_name, " has no openreg tensor argument, "
        "so no openreg device to run on"));
  }
  EnqueueOnCurrentStream(*device, kernel_name, [work = std::move(work)] {
    work.entry(work.arguments.data());
  });
  return absl::OkStatus();
}

}  // namespace openreg
