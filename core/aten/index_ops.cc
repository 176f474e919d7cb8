// Advanced indexing (`x[idx]`, aten::index.Tensor) without the CPU fallback:
// batch selection, gathered rows, masks applied by position. On the fallback
// a small call cost 2.1x CPU eager's time (docs/performance.md, "Advanced
// indexing off the fallback").
//
// index is a structured op whose meta function builds the TensorIterator its
// CPU implementation loops over: the indexed tensor restrided so that the
// indexed dimensions contribute nothing, and the index tensors, broadcast to
// the result. So it takes the loop path (iterator_loops.h), not
// StructuredCall: the calling thread runs ATen's meta function on the
// openreg tensors (its checks and errors are the CPU's, raised at the call;
// boolean masks become positions through nonzero, which reads the mask; CPU
// index tensors are copied to the device, as on CUDA), and the stream runs
// ATen's CPU index loop over the iterator the meta function built. An index
// out of range is found by the loop, on the stream, and raised by the next
// synchronization (or at the call under OPENREG_LAUNCH_BLOCKING=1), as the
// fallback did.
//
// Taken: an openreg `self` on which ATen's conjugate and negative fallbacks
// left no lazy bit, of a LoopDtypeWithoutScalars dtype (the index loop reads
// only through the iterator). Everything else goes to the CPU fallback.
#include <ATen/TensorIterator.h>
#include <ATen/core/IListRef.h>
#include <ATen/native/IndexKernel.h>
#include <ATen/ops/index_meta.h>
#include <torch/library.h>

#include "core/aten/argument_devices.h"
#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"

namespace openreg {
namespace {

// ATen's index iterator, as its meta function builds it, with a fresh
// openreg result and what the loop needs besides: the indexed dimensions'
// sizes and strides.
class IndexIterator final : public at::meta::structured_index_Tensor {
 public:
  // The meta function asks for the output before it builds the iterator,
  // to check a given one: there is none.
  const at::Tensor& maybe_get_output(int64_t output_idx) override {
    static const at::Tensor kNone;
    if (operands_.empty()) return kNone;
    return operands_[output_idx].tensor();
  }
  void set_output_raw_strided(int64_t output_idx, at::IntArrayRef sizes,
                              at::IntArrayRef strides,
                              at::TensorOptions options) override {
    AllocateFreshOutput(operands_[output_idx], sizes, strides, options);
  }

  at::DimVector indexed_sizes;
  at::DimVector indexed_strides;
};

at::Tensor Index(const at::Tensor& self,
                 const c10::List<std::optional<at::Tensor>>& indices) {
  if (!IsOpenReg(self) || !Plain(self) ||
      !LoopDtypeWithoutScalars(self.scalar_type())) {
    static const c10::OperatorHandle op = Op("aten::index", "Tensor");
    return Fallback(op, self, indices);
  }
  return EnqueueLoop<IndexIterator>(
      self.device().index(), "aten::index",
      [&](IndexIterator& iter) {
        auto precomputed = iter.meta(self, indices);
        iter.indexed_sizes = std::move(precomputed.sizes);
        iter.indexed_strides = std::move(precomputed.strides);
      },
      [](IndexIterator& iter) {
        at::native::index_stub(c10::DeviceType::CPU, iter, iter.indexed_sizes,
                               iter.indexed_strides);
      });
}

}  // namespace

void RegisterIndexKernels(torch::Library& m) {
  m.impl("index.Tensor", TORCH_FN(Index));
}

}  // namespace openreg
