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
// raises. Everything else goes to the CPU fallback, exactly as if this kernel
// were not registered. So does topk.values (out=), which is not registered:
// StructuredCall gives an op with two results fresh outputs only, and an
// out= form would need it to take the given ones (resized, or refused for
// another dtype, one by one); topk with out= is rare enough to leave there.
#include <ATen/ops/topk_native.h>
#include <torch/library.h>

#include <tuple>

#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"
#include "core/aten/structured_arguments.h"
#include "core/aten/structured_calls.h"

namespace openreg {
namespace {

std::tuple<at::Tensor, at::Tensor> Topk(const at::Tensor& self, int64_t k,
                                        int64_t dim, bool largest,
                                        bool sorted) {
  if (PlainOpenRegOn(self.device(), {&self}) &&
      LoopDtypeWithoutScalars(self.scalar_type()) &&
      RealNotBool(self.scalar_type())) {
    StructuredCall<at::native::structured_topk_out_cpu, /*kOutputs=*/2> call;
    call.meta(self, k, dim, largest, sorted);
    // k == 0 or an empty `self`: the implementation writes nothing.
    if (call.output(0).numel() != 0) {
      call.Enqueue("aten::topk", self, k, dim, largest, sorted);
    }
    return {call.output(0), call.output(1)};
  }
  static const c10::OperatorHandle op = Op("aten::topk", "");
  return FallbackOfTwo(op, self, k, dim, largest, sorted);
}

}  // namespace

void RegisterTopkKernels(torch::Library& m) {
  m.impl("topk", TORCH_FN(Topk));
}

}  // namespace openreg
