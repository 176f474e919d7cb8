// Gathering along a dimension (gather, gather.out) without the CPU
// fallback's per-call bookkeeping: torch.gather picks the targets'
// log-probabilities in losses, the chosen actions' values in reinforcement
// learning and the entries a topk selected, a small op each time, which cost
// the fallback 1.48x CPU eager's time on cpu_sim (docs/performance.md,
// "gather, cumsum and topk off the fallback").
//
// gather is a structured op: ATen's meta function checks the index (int64 or
// int32, no larger than `self` but along `dim`) and an out= tensor's overlaps,
// and sizes the result (the index's shape) at the call, raising the CPU's
// errors there; the stream runs ATen's CPU implementation on CPU aliases
// (core/aten/structured_calls.h). An index out of range is in the values:
// the implementation finds it on the stream and the next synchronization
// raises it, as it did on the fallback (as index_ops.cc's loop does).
//
// Taken: `self`, the index and an out= tensor that are plain openreg tensors
// of one device (PlainOpenRegOn), `self` of a LoopDtypeWithoutScalars dtype
// (every dtype the CPU's gather dispatches on but complex half). An out=
// tensor of another dtype raises the CPU's error at the call, where ATen's
// out= wrapper raises it (StructuredOutput). Everything else goes to the CPU
// fallback, exactly as if these kernels were not registered.
#include <ATen/ops/gather_native.h>
#include <torch/library.h>

#include <optional>

#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"
#include "core/aten/structured_arguments.h"
#include "core/aten/structured_calls.h"

namespace openreg {
namespace {

struct Gather {
  static constexpr Overload kFunctional{"aten::gather", ""};
  static constexpr Overload kOut{"aten::gather", "out"};

  static std::optional<at::Tensor> Enqueue(const at::Tensor& self,
                                           const at::Tensor* out, int64_t dim,
                                           const at::Tensor& index,
                                           bool sparse_grad) {
    if (!PlainOpenRegOn(self.device(), {&self, &index, out}) ||
        !LoopDtypeWithoutScalars(self.scalar_type())) {
      return std::nullopt;
    }
    StructuredCall<at::native::structured_gather_out> call(
        out == nullptr ? OutputKind::kFresh : OutputKind::kOut, out);
    call.meta(self, dim, index, sparse_grad);
    if (!call.accepted()) return std::nullopt;
    // An empty index: the implementation reads and writes nothing.
    if (call.output().numel() == 0) return call.output();
    call.Enqueue("aten::gather", self, dim, index, sparse_grad);
    return call.output();
  }
};

using GatherForms = Forms<Gather, int64_t, const at::Tensor&, bool>;

}  // namespace

void RegisterGatherKernels(torch::Library& m) {
  m.impl("gather", TORCH_FN(GatherForms::Functional));
  m.impl("gather.out", TORCH_FN(GatherForms::Out));
}

}  // namespace openreg
