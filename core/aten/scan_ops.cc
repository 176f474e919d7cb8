// Cumulative sums (cumsum, cumsum.out, cumsum_) without the CPU fallback's
// per-call bookkeeping: positions from masks, offsets from lengths, running
// totals, and cumsum's own gradient (a cumsum of the flipped gradient), a
// small op each time, which cost the fallback 1.39x CPU eager's time on
// cpu_sim (docs/performance.md, "gather, cumsum and topk off the fallback").
//
// cumsum is a structured op: ATen's meta function checks the dimension and
// picks the result's dtype (the `dtype` argument, else an out= tensor's,
// else `self`'s with integers and bools promoted to int64) at the call, and
// the stream runs ATen's CPU implementation on CPU aliases
// (core/aten/structured_calls.h), which converts `self` to that dtype itself,
// as on the CPU.
//
// Taken: `self` and an out= tensor that are plain openreg tensors of one
// device (PlainOpenRegOn), `self` of a LoopDtypeWithoutScalars dtype, and a
// result dtype the CPU's loop sums in (SumsInto). Everything else goes to the
// CPU fallback, exactly as if these kernels were not registered, and so do
// the calls StructuredCall does not accept (an in-place call that would
// change the tensor's dtype: the CPU's error). An out= tensor of another
// dtype than `dtype` raises the CPU's error at the call (StructuredOutput).
#include <ATen/ops/cumsum_native.h>
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include <optional>

#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"
#include "core/aten/structured_arguments.h"
#include "core/aten/structured_calls.h"

namespace openreg {
namespace {

// Whether the CPU implementation sums `self` into a result of `result` dtype
// without raising or warning from inside work on the stream. Its loop covers
// every LoopDtypeWithoutScalars dtype but bool (the CPU's "not implemented"
// error is the fallback's to raise). A complex `self` into a real result
// would warn that the imaginary part is discarded, once per process, from
// the stream's thread. A 0-dim `self` is not summed but filled in through a
// number, which raises when the value overflows another dtype.
bool SumsInto(const at::Tensor& self, at::ScalarType result) {
  const at::ScalarType input = self.scalar_type();
  return LoopDtypeWithoutScalars(result) && result != at::kBool &&
         (c10::isComplexType(result) || !c10::isComplexType(input)) &&
         (self.dim() > 0 || result == input);
}

struct Cumsum {
  static constexpr Overload kFunctional{"aten::cumsum", ""};
  static constexpr Overload kInPlace{"aten::cumsum_", ""};
  static constexpr Overload kOut{"aten::cumsum", "out"};

  static std::optional<at::Tensor> Enqueue(
      const at::Tensor& self, const at::Tensor* out, int64_t dim,
      std::optional<at::ScalarType> dtype) {
    if (!PlainOpenRegOn(self.device(), {&self, out}) ||
        !LoopDtypeWithoutScalars(self.scalar_type())) {
      return std::nullopt;
    }
    StructuredCall<at::native::structured_cumsum_out> call(
        OutputKindOf(self, out), out);
    call.meta(self, dim, dtype);
    if (!call.accepted() || !SumsInto(self, call.output().scalar_type())) {
      return std::nullopt;
    }
    // An empty result: the implementation writes nothing.
    if (call.output().numel() == 0) return call.output();
    call.Enqueue("aten::cumsum", self, dim, dtype);
    return call.output();
  }
};

using CumsumForms = Forms<Cumsum, int64_t, std::optional<at::ScalarType>>;

}  // namespace

void RegisterScanKernels(torch::Library& m) {
  m.impl("cumsum", TORCH_FN(CumsumForms::Functional));
  m.impl("cumsum.out", TORCH_FN(CumsumForms::Out));
  m.impl("cumsum_", TORCH_FN(CumsumForms::InPlace));
}

}  // namespace openreg
