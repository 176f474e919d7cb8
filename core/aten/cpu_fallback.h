// The boxed fallback for every ATen op openreg does not register itself.
//
// It runs the op's CPU kernel on device memory: each openreg tensor argument
// becomes a CPU alias of the same memory (cpu_alias.h), the kernel runs in a
// host function on the current stream of the op's device, and the results
// are mapped back: an argument the op returned or wrote comes back as the
// caller's own openreg tensor, a view of an argument as an openreg view of
// the same storage, and a fresh result, which the kernel allocated in device
// memory (Note [Kernel allocations in device memory]), as an openreg tensor
// over that memory.
// Random ops get the device generator's CPU state, so the device generator
// (not the CPU one) drives them.
#ifndef OPENREG_CORE_ATEN_CPU_FALLBACK_H_
#define OPENREG_CORE_ATEN_CPU_FALLBACK_H_

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace openreg {

void CpuFallback(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                 torch::jit::Stack* stack);

// Runs the CPU kernel of `cpu_op` on a stack that holds `cpu_op`'s arguments,
// the same way. For ops whose device kernel is a differently named ATen op
// (e.g. convolution_overrideable -> convolution).
void RunCpuKernelOf(const c10::OperatorHandle& cpu_op,
                    torch::jit::Stack* stack);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_CPU_FALLBACK_H_
