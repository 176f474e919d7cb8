// Note [Launching compiled kernels]
//
// torch.compile's Inductor generates C++ kernels for openreg (see
// docs/compile.md). Such a kernel reads and writes device memory, so it must
// run where every other openreg op runs: in stream order, on the driver's
// execution thread, inside a launched host function. LaunchCompiledKernel is
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
// Lifetime. The launched work owns a reference to the storage of every
// tensor argument until it has run (Note [Asynchronous execution]), so
// Python may drop the tensors at once. It owns no Python object: the driver's
// thread never needs the GIL.
//
// Thread-safety: may be called from any user thread, without the GIL.
#ifndef OPENREG_CORE_COMPILE_COMPILED_KERNEL_LAUNCH_H_
#define OPENREG_CORE_COMPILE_COMPILED_KERNEL_LAUNCH_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace openreg {

union OpenRegKernelArgument {
  void* pointer;
  int64_t integer;
  double floating;
};
static_assert(sizeof(OpenRegKernelArgument) == 8,
              "the generated entry points index 8-byte slots");

using CompiledKernelEntry = void (*)(const OpenRegKernelArgument* arguments);

// One argument as the caller passes it.
using CompiledKernelValue = std::variant<at::Tensor, int64_t, double>;

// Enqueues `entry` with `values` on the current stream of the tensors'
// device. Every openreg tensor must be on one device; there must be at least
// one. A 'P' argument may also be a CPU tensor of one element (CPU scalars
// above); an 'M' argument must be an openreg tensor. Returns
// InvalidArgument, naming `kernel_name`, when the values do not match
// `signature`.
absl::Status LaunchCompiledKernel(CompiledKernelEntry entry,
                                  absl::string_view kernel_name,
                                  absl::string_view signature,
                                  const std::vector<CompiledKernelValue>& values);

}  // namespace openreg

#endif  // OPENREG_CORE_COMPILE_COMPILED_KERNEL_LAUNCH_H_
