// A functional CPU kernel's results brought into the outputs the caller
// already holds: copied, or computed there when the kernel's own allocations
// were served from the outputs' memory (Note [Results computed in their
// outputs' memory], result_memory_plan.h). The CPU fallback uses it for ops
// without an out= kernel of their own, and so do ops that launch a CPU kernel
// themselves (the fused LSTM layer, Note [Fused LSTM layers]).
//
// A run goes: OfferOutputMemory into a ResultMemoryPlan; the kernel inside a
// ScopedKernelMemoryOnDevice and a ScopedResultMemoryPlan of that plan
// (kernel_memory.h); then PlaceResults.
//
// Thread-safety: both functions run on the thread that ran the kernel.
#ifndef OPENREG_CORE_ATEN_RESULTS_INTO_OUTPUTS_H_
#define OPENREG_CORE_ATEN_RESULTS_INTO_OUTPUTS_H_

#include <ATen/core/Tensor.h>
#include <c10/core/StorageImpl.h>
#include <c10/util/intrusive_ptr.h>

#include <string>

#include "absl/types/span.h"
#include "core/aten/result_memory_plan.h"

namespace openreg {

// Where a kernel's results go: one entry per result tensor.
struct KernelOutputs {
  // CPU aliases of the outputs; undefined for an undefined result.
  absl::Span<const at::Tensor> into;
  // Weak references to the outputs' openreg storages (empty for an undefined
  // result): a kernel that keeps a buffer in memory lent from one keeps that
  // output alive through it (EndLoan, kernel_memory.h). Weak, so that an
  // output the caller drops before its kernel ran is freed at once.
  absl::Span<const c10::weak_intrusive_ptr<c10::StorageImpl>> storages;
};

// Offers to `plan` the memory of every defined output that may be lent.
void OfferOutputMemory(const KernelOutputs& outputs, ResultMemoryPlan& plan);

// After the kernel ran under `plan`: brings each of `results` into its
// output, a copy unless it was computed there, and ends the loans of output
// memory. If the kernel kept a buffer in lent memory past its return, its
// results are still placed right, the op is never lent memory again
// (ResultMemoryPlan::NeverLend), and this throws an internal error naming
// `op_name`.
void PlaceResults(absl::Span<const at::Tensor> results,
                  const KernelOutputs& outputs, ResultMemoryPlan& plan,
                  const std::string& op_name);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_RESULTS_INTO_OUTPUTS_H_
