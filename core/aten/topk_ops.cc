// The k largest or smallest entries along a dimension (topk) without the CPU
// fallback's per-call bookkeeping: top-k accuracy, sampling from the most
// likely tokens, beam search and mixture-of-experts routing call it on small
// tensors, which cost the fallback 1.26x CPU eager's time on cpu_sim
// (docs/performance.md, "gather, cumsum and topk off the fallback").
//
// topk is a structured op with two results, the values and their int64
// indices: ATen's meta function checks the dimension and k and sizes both at
// the call, raising the CPU's errors there, and the stream runs ATen's CPU
// implementation on CPU aliases (core/aten/structured_calls.h), so ties and
// NaNs are ordered as on the CPU.
//
// Taken: a plain openreg `self` (PlainOpenRegOn) of a dtype the CPU's topk
// sorts: LoopDtypeWithoutScalars without bool and complex, for which the CPU
// raises; with out= (topk.values), openreg tensors on its device, resized as
// ATen resizes them (another dtype raises the CPU's error at the call,
// StructuredOutput). Everything else goes to the CPU fallback, exactly as if
// this kernel were not registered.
#include <ATen/ops/topk_native.h>
#include <torch/library.h>

#include <tuple>

#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"
#include "core/aten/structured_arguments.h"
#include "core/aten/structured_calls.h"

namespace openreg {
namespace {

using TopkCall = StructuredCall<at::native::structured_topk_out_cpu, 2>;

bool TakesSelf(const at::Tensor& self) {
  return PlainOpenRegOn(self.device(), {&self}) &&
         LoopDtypeWithoutScalars(self.scalar_type()) &&
         RealNotBool(self.scalar_type());
}

// topk of `self` in `call`'s outputs; false when the fallback must take the
// call.
bool EnqueueTopk(TopkCall& call, const at::Tensor& self, int64_t k,
                 int64_t dim, bool largest, bool sorted) {
  call.meta(self, k, dim, largest, sorted);
  if (!call.accepted()) return false;
  // k == 0 or an empty `self`: the implementation writes nothing.
  if (call.output(0).numel() != 0) {
    call.Enqueue("aten::topk", self, k, dim, largest, sorted);
  }
  return true;
}

std::tuple<at::Tensor, at::Tensor> Topk(const at::Tensor& self, int64_t k,
                                        int64_t dim, bool largest,
                                        bool sorted) {
  static const c10::OperatorHandle op = Op("aten::topk", "");
  return TwoResults<at::native::structured_topk_out_cpu>(
      TakesSelf(self),
      [&](TopkCall& call) {
        return EnqueueTopk(call, self, k, dim, largest, sorted);
      },
      op, self, k, dim, largest, sorted);
}

std::tuple<at::Tensor&, at::Tensor&> TopkOut(const at::Tensor& self,
                                             int64_t k, int64_t dim,
                                             bool largest, bool sorted,
                                             at::Tensor& values,
                                             at::Tensor& indices) {
  static const c10::OperatorHandle op = Op("aten::topk", "values");
  return TwoResultsInto<at::native::structured_topk_out_cpu>(
      TakesSelf(self), self.device(), values, indices,
      [&](TopkCall& call) {
        return EnqueueTopk(call, self, k, dim, largest, sorted);
      },
      op, self, k, dim, largest, sorted);
}

}  // namespace

void RegisterTopkKernels(torch::Library& m) {
  m.impl("topk", TORCH_FN(Topk));
  m.impl("topk.values", TORCH_FN(TopkOut));
}

}  // namespace openreg
