#include "core/compile/compiled_kernel_launch.h"

#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/torch_runtime/device_allocator.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_stream.h"

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
    default:
      return "a float";
  }
}

const char* ValueName(const CompiledKernelValue& value) {
  if (std::holds_alternative<const at::Tensor*>(value)) return "a tensor";
  if (std::holds_alternative<int64_t>(value)) return "an int";
  return "a float";
}

// Slots a kernel of Inductor's usually has at most: its launch then needs
// no allocation for them beyond the work object itself.
constexpr size_t kInlineSlots = 8;

// A CPU scalar's value as the launch read it: room for the widest element
// type (complex128), aligned for any of them.
struct alignas(16) ScalarCopy {
  std::byte bytes[16];
};

// What the launched work owns: the argument slots, the storages behind the
// pointers in them and the copies of CPU scalars. Moved, whole, into the one
// host function of the launch; `scalars` is a std::vector so that the
// copies, which slots point to, stay where they are when the work moves.
struct CompiledKernelWork {
  CompiledKernelEntry entry;
  absl::InlinedVector<OpenRegKernelArgument, kInlineSlots> arguments;
  absl::InlinedVector<c10::Storage, kInlineSlots> storages;
  std::vector<ScalarCopy> scalars;
};

}  // namespace

absl::StatusOr<CompiledKernel> CompiledKernel::Create(CompiledKernelEntry entry,
                                                      std::string name,
                                                      std::string signature) {
  if (entry == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("compiled kernel ", name,
                     ": the entry point is null; expected "
                     "the address of its openreg_kernel_entry"));
  }
  size_t tensor_count = 0;
  for (size_t i = 0; i < signature.size(); ++i) {
    const char kind = signature[i];
    if (kind == 'P' || kind == 'M') {
      ++tensor_count;
    } else if (kind != 'I' && kind != 'F') {
      return absl::InvalidArgumentError(
          absl::StrCat("compiled kernel ", name, ": signature '", signature,
                       "' has '", std::string(1, kind), "' at ", i,
                       "; expected only 'P', 'M', 'I' or 'F'"));
    }
  }
  if (tensor_count == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compiled kernel ", name, " has no tensor parameter (signature '",
        signature, "'), so no openreg device to run on"));
  }
  return CompiledKernel(entry, std::move(name), std::move(signature),
                        tensor_count);
}

absl::Status CompiledKernel::Launch(
    absl::Span<const CompiledKernelValue> values) const {
  if (values.size() != signature_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("compiled kernel ", name_, " takes ", signature_.size(),
                     " arguments (", signature_, "), got ", values.size()));
  }
  CompiledKernelWork work{entry_, {}, {}, {}};
  work.arguments.resize(values.size());
  work.storages.reserve(tensor_count_);
  c10::DeviceIndex device = -1;
  // The kernel runs on the driver's thread and gets execution addresses
  // (docs/memory.md, "Device memory the host cannot touch").
  intptr_t execution_offset = 0;
  // The current stream of the device, which the work is enqueued on, and
  // the stream whose memory it need not own (OrderedOnStream): the same one,
  // or null while it captures.
  openreg_stream stream = nullptr;
  openreg_stream ordering = nullptr;
  for (size_t i = 0; i < values.size(); ++i) {
    const CompiledKernelValue& value = values[i];
    OpenRegKernelArgument& slot = work.arguments[i];
    const char kind = signature_[i];
    const auto mismatch = [&] {
      return absl::InvalidArgumentError(
          absl::StrCat("compiled kernel ", name_, ": argument ", i, " must be ",
                       KindName(kind), ", got ", ValueName(value)));
    };
    if (kind == 'P' || kind == 'M') {
      const at::Tensor* const* held = std::get_if<const at::Tensor*>(&value);
      if (held == nullptr || *held == nullptr || !(*held)->defined()) {
        return mismatch();
      }
      const at::Tensor& tensor = **held;
      if (kind == 'P' && tensor.device().is_cpu() && tensor.numel() == 1) {
        // Read now, on the calling thread (CPU scalars above). Reserved for
        // every tensor slot at the first one, so no copy moves later.
        if (work.scalars.empty()) work.scalars.reserve(tensor_count_);
        static_assert(sizeof(ScalarCopy) >= sizeof(c10::complex<double>));
        ScalarCopy& copy = work.scalars.emplace_back();
        std::memcpy(copy.bytes, tensor.const_data_ptr(), tensor.itemsize());
        slot.pointer = copy.bytes;
        continue;
      }
      if (tensor.device().type() != c10::DeviceType::PrivateUse1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "compiled kernel ", name_, ": argument ", i,
            kind == 'P'
                ? " must be an openreg tensor or a CPU scalar"
                : " is written by the kernel and must be an openreg tensor",
            ", got a tensor of ", tensor.numel(), " elements on ",
            tensor.device().str(), "; move it with .to('openreg')"));
      }
      const c10::DeviceIndex index = tensor.device().index();
      if (device < 0) {
        device = index;
        execution_offset = ExecutionOffsetOf(index);
        stream = CurrentDriverStream(index);
        ordering = StreamOrderingWork(stream);
      } else if (device != index) {
        return absl::InvalidArgumentError(absl::StrCat(
            "compiled kernel ", name_,
            ": all tensors must be on one "
            "device; argument ",
            i, " is on openreg:", index, ", earlier ones on openreg:", device));
      }
      // Pointer arithmetic only: device memory is not touched here. A
      // pointer the kernel only reads takes the const path, which leaves a
      // copy-on-write storage shared instead of copying it here.
      if (tensor.numel() == 0) {
        slot.pointer = nullptr;
      } else if (kind == 'P') {
        slot.pointer =
            static_cast<char*>(const_cast<void*>(tensor.const_data_ptr())) +
            execution_offset;
      } else {
        slot.pointer =
            static_cast<char*>(tensor.mutable_data_ptr()) + execution_offset;
      }
      if (!OrderedOnStream(tensor.storage(), ordering)) {
        work.storages.push_back(tensor.storage());
      }
    } else if (kind == 'I') {
      const int64_t* integer = std::get_if<int64_t>(&value);
      if (integer == nullptr) return mismatch();
      slot.integer = *integer;
    } else if (const double* floating = std::get_if<double>(&value)) {
      slot.floating = *floating;
    } else if (const int64_t* integer = std::get_if<int64_t>(&value)) {
      slot.floating = static_cast<double>(*integer);
    } else {
      return mismatch();
    }
  }
  if (device < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("compiled kernel ", name_,
                     " got no openreg tensor (only CPU "
                     "scalars), so no openreg device to run on"));
  }
  EnqueueWork(device, stream, name_, [work = std::move(work)] {
    work.entry(work.arguments.data());
  });
  return absl::OkStatus();
}

}  // namespace openreg
