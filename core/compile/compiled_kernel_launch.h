// Note [Launching compiled kernels]
//
// torch.compile's Inductor generates C++ kernels for openreg (see
// docs/compile.md). Such a kernel reads and writes device memory, so it must
// run where every other openreg op runs: in stream order, on the driver's
// execution thread, inside a launched host function. CompiledKernel::Launch is
// that launch path. The Python wrapper Inductor generates calls it once per
// kernel call; it never runs the kernel on the calling thread (except on a
// synchronous driver, where every launch completes on the calling thread).
//
// Calling convention. Inductor's kernels take typed parameters (float*,
// const int64_t, ...) that differ per kernel. Every kernel compiled for
// openreg therefore also gets a generated entry point
//   extern "C" void openreg_kernel_entry(const OpenRegKernelArgument* args);
// that unpacks the array into the kernel's parameters. One slot per
// parameter, 8 bytes each, in parameter order (the Python side,
// torch_openreg/_inductor/kernel_launcher.py, writes the same union into the
// generated code). `signature` has one character per slot saying what the
// caller must pass: 'P' a tensor the kernel only reads, 'M' a tensor it
// writes (the slot holds the tensor's data pointer), 'I' an integer, 'F' a
// floating-point number.
//
// CPU scalars. A graph on openreg may read a zero-dimensional CPU tensor (an
// optimizer's step count, a Python number Dynamo wrapped). As on CUDA, such
// a value is taken when the kernel is launched, not when it runs: the launch
// copies it into memory the work owns, so CPU code that changes the tensor
// afterwards does not race with the queued kernel.
//
// Lifetime. Python may drop the tensors at once. The launched work owns a
// reference, until it has run, to the storage of every tensor argument whose
// memory is not stream-ordered on the stream it is enqueued on (Note
// [Asynchronous execution]): memory of another stream, of the registered
// allocator, or anything while the stream captures. Memory ordered on that
// stream needs none, as for eager ops: its free only lets later work on the
// stream reuse it (Note [Stream-ordered reuse]), so a loop of compiled calls
// whose results Python drops reuses the same few blocks however far the host
// runs ahead. The work owns no Python object: the driver's thread never needs
// the GIL.
//
// Per-call cost. The generated wrapper calls a kernel once per graph call,
// so everything that does not depend on the call's values (the entry point,
// the name, the checked signature, how many storages a launch keeps) is
// worked out once, when the kernel is loaded, by CompiledKernel::Create;
// Launch only turns values into slots and enqueues one host function.
//
// Thread-safety: a CompiledKernel is immutable after Create; Launch may be
// called from any user thread, without the GIL, on one kernel at once.
#ifndef OPENREG_CORE_COMPILE_COMPILED_KERNEL_LAUNCH_H_
#define OPENREG_CORE_COMPILE_COMPILED_KERNEL_LAUNCH_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace openreg {

union OpenRegKernelArgument {
  void* pointer;
  int64_t integer;
  double floating;
};
static_assert(sizeof(OpenRegKernelArgument) == 8,
              "the generated entry points index 8-byte slots");

using CompiledKernelEntry = void (*)(const OpenRegKernelArgument* arguments);

// One argument as the caller passes it. A tensor is passed by address: the
// caller keeps it alive until Launch returns (the launched work takes its
// own references to the storages).
using CompiledKernelValue = std::variant<const at::Tensor*, int64_t, double>;

class CompiledKernel {
 public:
  // `signature` must hold only 'P', 'M', 'I' and 'F' and name at least one
  // tensor; `entry` must not be null. Returns InvalidArgument, naming
  // `name`, otherwise.
  static absl::StatusOr<CompiledKernel> Create(CompiledKernelEntry entry,
                                               std::string name,
                                               std::string signature);

  // Enqueues the kernel with `values` on the current stream of the tensors'
  // device. Every openreg tensor must be on one device; there must be at
  // least one. A 'P' argument may also be a CPU tensor of one element (CPU
  // scalars above); an 'M' argument must be an openreg tensor. Returns
  // InvalidArgument, naming the kernel, when the values do not match the
  // signature.
  absl::Status Launch(absl::Span<const CompiledKernelValue> values) const;

  const std::string& name() const { return name_; }
  const std::string& signature() const { return signature_; }

 private:
  CompiledKernel(CompiledKernelEntry entry, std::string name,
                 std::string signature, size_t tensor_count)
      : entry_(entry),
        name_(std::move(name)),
        signature_(std::move(signature)),
        tensor_count_(tensor_count) {}

  CompiledKernelEntry entry_;
  std::string name_;
  std::string signature_;
  // How many of the slots are tensors: the storages a launch keeps alive.
  size_t tensor_count_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_COMPILE_COMPILED_KERNEL_LAUNCH_H_
