// The boxed fallback for every ATen op openreg does not register itself.
//
// It runs the op's ATen CPU kernel on device memory: each openreg tensor
// argument becomes a CPU alias of the same memory (cpu_alias.h) and the kernel
// runs inside work enqueued on the current stream of the op's device
// (Note [Asynchronous execution]). The calling thread returns without waiting
// whenever it can know the results before the kernel runs:
//   - ops whose tensor results are their (written) arguments: in-place ops
//     and out= ops (how ATen calls every structured kernel), after resizing
//     out= arguments to the shapes the meta kernel gives;
//   - ops with fresh results whose shapes a meta kernel can compute
//     (meta_shapes.h): outputs are allocated first and the kernel writes into
//     them, through the op's out= overload when there is one; otherwise the
//     functional kernel's results are copied into them, or computed in
//     their memory (Note [Results computed in their outputs' memory]).
// Otherwise (results whose shapes depend on data, such as nonzero, or
// results that are not tensors) it waits for the kernel, and a fresh result
// is adopted from the device memory the kernel allocated it in
// (Note [Kernel allocations in device memory]).
//
// Random ops get a CPU generator seeded, at enqueue time, from the device
// generator (generator.h), so results do not depend on when kernels run.
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

// The same, with fresh 4-d and 5-d results allocated in `results_format`
// (channels-last) where the meta kernel's strides would differ from the CPU
// kernel's: the caller knows the format the CPU kernel chooses.
void RunCpuKernelOf(const c10::OperatorHandle& cpu_op, torch::jit::Stack* stack,
                    c10::MemoryFormat results_format);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_CPU_FALLBACK_H_
