// Concatenation (cat, cat.out) without the CPU fallback's per-call
// bookkeeping: torch.cat joins the gates of recurrent cells, the heads of
// attention and the branches of many models, several times a step, each a
// tiny op that cost the fallback more than twice CPU eager's time
// (docs/performance.md, "cat off the fallback").
//
// cat is a structured op: ATen's meta function checks the list (dimensions,
// shapes, an empty list, an out= tensor that overlaps an input or cannot hold
// the promoted dtype) and sizes the result at the call, raising the CPU's
// errors there, and the stream runs ATen's CPU implementation on CPU aliases
// (core/aten/structured_calls.h). The meta function gives the result the
// inputs' memory format (channels-last inputs give a channels-last result)
// and skips the legacy 1-d empty tensors; the implementation's flags come
// from it too.
//
// Mixed dtypes are taken: the implementation converts while it copies, host
// code on the aliases as on the CPU, and so does an out= tensor of another
// dtype the promoted one casts to. A call goes to the CPU fallback, exactly as
// if this kernel were not registered, unless every tensor, the out= one
// included, is an openreg tensor of one device, of one of the dtypes every
// path of the CPU implementation copies (LoopDtypeWithoutScalars; complex half,
// the float8 and the wider unsigned dtypes stay out): CPU tensors mixed in and
// other devices get the fallback's results and errors. Lazily conjugated or
// negated inputs never get here (ATen's Conjugate and Negative fallbacks
// resolve them first, as for the CPU); such an out= tensor would, and goes to
// the fallback too.
#include <ATen/ops/cat_native.h>
#include <torch/library.h>

#include <optional>

#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"
#include "core/aten/structured_arguments.h"
#include "core/aten/structured_calls.h"

namespace openreg {
namespace {

bool TakesTensor(const at::Tensor& tensor, const at::Device& device) {
  return PlainOpenRegOn(device, {&tensor}) &&
         LoopDtypeWithoutScalars(tensor.scalar_type());
}

// Whether the CPU implementation can run this call on the stream as it runs
// on the CPU. An empty list is taken with an out= tensor (the only way such a
// call reaches openreg): the meta function raises the CPU's error.
bool Takes(const at::ITensorListRef& tensors, const at::Tensor* out) {
  if (out == nullptr && tensors.empty()) return false;
  const at::Device device = (out != nullptr ? *out : tensors.front()).device();
  for (const at::Tensor& tensor : tensors) {
    if (!TakesTensor(tensor, device)) return false;
  }
  return out == nullptr || TakesTensor(*out, device);
}

// Enqueues cat writing `out` (null: a fresh result) and returns the result,
// or nothing when the fallback must take the call.
std::optional<at::Tensor> EnqueueCat(const at::ITensorListRef& tensors,
                                     int64_t dim, const at::Tensor* out) {
  if (!Takes(tensors, out)) return std::nullopt;
  StructuredCall<at::native::structured_cat_out_cpu> call(
      out == nullptr ? OutputKind::kFresh : OutputKind::kOut, out);
  const auto flags = call.meta(tensors, dim);
  if (!call.accepted()) return std::nullopt;
  // The implementation writes nothing into an empty result.
  if (call.output().numel() == 0) return call.output();
  call.Enqueue("aten::cat", tensors, flags.dim, flags.valid,
               flags.all_contiguous, flags.all_same_dtype,
               flags.all_same_sizes_and_stride, flags.memory_format);
  return call.output();
}

at::Tensor Cat(const at::ITensorListRef& tensors, int64_t dim) {
  if (auto result = EnqueueCat(tensors, dim, nullptr)) {
    return *std::move(result);
  }
  static const c10::OperatorHandle op = Op("aten::cat", "");
  return Fallback(op, tensors, dim);
}

at::Tensor& CatOut(const at::ITensorListRef& tensors, int64_t dim,
                   at::Tensor& out) {
  if (!EnqueueCat(tensors, dim, &out)) {
    static const c10::OperatorHandle op = Op("aten::cat", "out");
    Fallback(op, tensors, dim, out);
  }
  return out;
}

}  // namespace

void RegisterCatKernels(torch::Library& m) {
  m.impl("cat", TORCH_FN(Cat));
  m.impl("cat.out", TORCH_FN(CatOut));
}

}  // namespace openreg
