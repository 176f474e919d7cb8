// Reductions over dimensions without the CPU fallback's per-call
// bookkeeping: sums and means (bias gradients and loss reductions, the
// largest fallback rows of training steps after the matrix products;
// docs/performance.md, "More ops through TensorIterator"), the vector norm
// gradient clipping takes, and the maxima, minima, their indices and the
// any/all tests that metrics and masks run each step.
//
// All are structured ops: ATen's meta function checks the dimensions and
// dtype and sizes the result at the call, and the stream runs ATen's CPU
// implementation on CPU aliases (core/aten/structured_calls.h), with its own
// dtype conversions and accumulation order. A call goes to the CPU fallback,
// exactly as if these kernels were not registered, unless StructuredTakes
// its tensors with the op's dtype predicate below: the dtypes its CPU
// implementation dispatches on, so that an unsupported dtype raises the
// CPU's error at the call (from the fallback) rather than from inside work
// on the stream.
#include <ATen/ops/all_native.h>
#include <ATen/ops/amax_native.h>
#include <ATen/ops/amin_native.h>
#include <ATen/ops/any_native.h>
#include <ATen/ops/argmax_native.h>
#include <ATen/ops/argmin_native.h>
#include <ATen/ops/linalg_vector_norm_native.h>
#include <ATen/ops/max_native.h>
#include <ATen/ops/mean_native.h>
#include <ATen/ops/min_native.h>
#include <ATen/ops/sum_native.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "core/aten/iterator_loops.h"
#include "core/aten/native_ops.h"
#include "core/aten/structured_arguments.h"
#include "core/aten/structured_calls.h"

namespace openreg {
namespace {

// --- Which dtypes each implementation dispatches on --------------------------

// The norm: StructuredDtype, floating and complex (its meta function raises
// for others, but the fallback always raised that error, and still does).
//
// Sums, means, any and all: LoopDtypeWithoutScalars, every dtype the
// iterator's loops read (sum and mean convert integers and bools as they
// accumulate; mean's meta function raises the CPU's error for an integer
// result at the call).
//
// amax, amin, max and min over a dimension: ordered dtypes, bool included.
bool OrderedDtype(at::ScalarType dtype) {
  return LoopDtypeWithoutScalars(dtype) && Real(dtype);
}
// argmax and argmin: ordered dtypes but bool, which ATen's CPU loop refuses.
bool ArgExtremumDtype(at::ScalarType dtype) {
  return LoopDtypeWithoutScalars(dtype) && RealNotBool(dtype);
}

// --- One result --------------------------------------------------------------

// A reduction of `self` with the other arguments `args` writing `out` (null:
// a fresh result): `Impl` is ATen's structured implementation, `takes` the
// dtypes it dispatches on.
template <typename Impl, typename... Args>
std::optional<at::Tensor> EnqueueReduction(const char* name,
                                           bool (*takes)(at::ScalarType),
                                           const at::Tensor& self,
                                           const at::Tensor* out,
                                           const Args&... args) {
  if (!StructuredTakes({&self}, out, takes)) return std::nullopt;
  StructuredCall<Impl> call(
      out == nullptr ? OutputKind::kFresh : OutputKind::kOut, out);
  call.meta(self, args...);
  if (!call.accepted()) return std::nullopt;
  call.Enqueue(name, self, args...);
  return call.output();
}

// A reduction as Forms' kernel: the op `kOp` with functional overload
// `kFunctionalOverload` and out= overload `kOutOverload`, ATen's structured
// implementation `Impl`, and the dtypes `kTakes` it runs.
template <typename Impl, const char* kOp, const char* kFunctionalOverload,
          const char* kOutOverload, bool (*kTakes)(at::ScalarType)>
struct Reduction {
  static constexpr Overload kFunctional{kOp, kFunctionalOverload};
  static constexpr Overload kOut{kOp, kOutOverload};
  template <typename... Args>
  static std::optional<at::Tensor> Enqueue(const at::Tensor& self,
                                           const at::Tensor* out,
                                           const Args&... args) {
    return EnqueueReduction<Impl>(kOp, kTakes, self, out, args...);
  }
};

constexpr char kDefault[] = "";
constexpr char kOutName[] = "out";

constexpr char kSum[] = "aten::sum";
constexpr char kSumDims[] = "dim_IntList";
constexpr char kSumDimsOut[] = "IntList_out";
using SumForms =
    Forms<Reduction<at::native::structured_sum_out, kSum, kSumDims,
                    kSumDimsOut, LoopDtypeWithoutScalars>,
          at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>>;

constexpr char kMean[] = "aten::mean";
constexpr char kMeanDims[] = "dim";
using MeanForms =
    Forms<Reduction<at::native::structured_mean_out, kMean, kMeanDims,
                    kOutName, LoopDtypeWithoutScalars>,
          at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>>;

constexpr char kVectorNorm[] = "aten::linalg_vector_norm";
using VectorNormForms =
    Forms<Reduction<at::native::structured_linalg_vector_norm_out,
                    kVectorNorm, kDefault, kOutName, StructuredDtype>,
          const c10::Scalar&, at::OptionalIntArrayRef, bool,
          std::optional<at::ScalarType>>;

// amax and amin over a list of dimensions (empty: all of them).
template <typename Impl, const char* kOp>
using ExtremumForms = Forms<Reduction<Impl, kOp, kDefault, kOutName,
                                      OrderedDtype>,
                            at::IntArrayRef, bool>;
constexpr char kAmax[] = "aten::amax";
constexpr char kAmin[] = "aten::amin";
using AmaxForms = ExtremumForms<at::native::structured_amax_out, kAmax>;
using AminForms = ExtremumForms<at::native::structured_amin_out, kAmin>;

// argmax and argmin over one dimension or, without one, the flattened
// tensor.
template <typename Impl, const char* kOp>
using ArgExtremumForms = Forms<Reduction<Impl, kOp, kDefault, kOutName,
                                         ArgExtremumDtype>,
                               std::optional<int64_t>, bool>;
constexpr char kArgmax[] = "aten::argmax";
constexpr char kArgmin[] = "aten::argmin";
using ArgmaxForms =
    ArgExtremumForms<at::native::structured_argmax_out, kArgmax>;
using ArgminForms =
    ArgExtremumForms<at::native::structured_argmin_out, kArgmin>;

// any and all, each over one dimension, a list of them, or everything.
constexpr char kAny[] = "aten::any";
constexpr char kAll[] = "aten::all";
constexpr char kDim[] = "dim";
constexpr char kDims[] = "dims";
constexpr char kDimsOut[] = "dims_out";
constexpr char kAllOut[] = "all_out";
template <typename Impl, const char* kOp, typename... Rest>
using TestForms =
    Forms<Reduction<Impl, kOp, kDim, kOutName, LoopDtypeWithoutScalars>,
          Rest...>;
template <typename Impl, const char* kOp>
using TestOverDimsForms =
    Forms<Reduction<Impl, kOp, kDims, kDimsOut, LoopDtypeWithoutScalars>,
          at::OptionalIntArrayRef, bool>;
template <typename Impl, const char* kOp>
using TestOfAllForms =
    Forms<Reduction<Impl, kOp, kDefault, kAllOut, LoopDtypeWithoutScalars>>;

using AnyDimForms = TestForms<at::native::structured_any_out, kAny, int64_t,
                              bool>;
using AnyDimsForms = TestOverDimsForms<at::native::structured_any_dims_out,
                                       kAny>;
using AnyAllForms = TestOfAllForms<at::native::structured_any_all_out, kAny>;
using AllDimForms = TestForms<at::native::structured_all_out, kAll, int64_t,
                              bool>;
using AllDimsForms = TestOverDimsForms<at::native::structured_all_dims_out,
                                       kAll>;
using AllAllForms = TestOfAllForms<at::native::structured_all_all_out, kAll>;

// --- Values and indices: max.dim and min.dim ---------------------------------

// The functional and out= kernels of max.dim or min.dim (`Impl`): the op
// `kOp`, with the out= overload `kOutOverload`.
template <typename Impl, const char* kOp, const char* kOutOverload>
struct ExtremumWithIndex {
  // The values and indices in `call`'s outputs.
  static bool Enqueue(StructuredCall<Impl, 2>& call, const at::Tensor& self,
                      int64_t dim, bool keepdim) {
    const auto wrapped = call.meta(self, dim, keepdim);
    if (!call.accepted()) return false;
    call.Enqueue(kOp, self, wrapped.dim, keepdim);
    return true;
  }

  static std::tuple<at::Tensor, at::Tensor> Functional(const at::Tensor& self,
                                                       int64_t dim,
                                                       bool keepdim) {
    static const c10::OperatorHandle op = Op(kOp, "dim");
    return TwoResults<Impl>(
        StructuredTakes({&self}, nullptr, OrderedDtype),
        [&](StructuredCall<Impl, 2>& call) {
          return Enqueue(call, self, dim, keepdim);
        },
        op, self, dim, keepdim);
  }

  static std::tuple<at::Tensor&, at::Tensor&> Out(const at::Tensor& self,
                                                  int64_t dim, bool keepdim,
                                                  at::Tensor& values,
                                                  at::Tensor& indices) {
    static const c10::OperatorHandle op = Op(kOp, kOutOverload);
    return TwoResultsInto<Impl>(
        StructuredTakes({&self}, nullptr, OrderedDtype), self.device(), values,
        indices,
        [&](StructuredCall<Impl, 2>& call) {
          return Enqueue(call, self, dim, keepdim);
        },
        op, self, dim, keepdim);
  }
};

constexpr char kMax[] = "aten::max";
constexpr char kMaxOut[] = "dim_max";
constexpr char kMin[] = "aten::min";
constexpr char kMinOut[] = "dim_min";
using MaxDim = ExtremumWithIndex<at::native::structured_max_out, kMax, kMaxOut>;
using MinDim = ExtremumWithIndex<at::native::structured_min_out, kMin, kMinOut>;

}  // namespace

void RegisterReductionKernels(torch::Library& m) {
  m.impl("sum.dim_IntList", TORCH_FN(SumForms::Functional));
  m.impl("sum.IntList_out", TORCH_FN(SumForms::Out));
  m.impl("mean.dim", TORCH_FN(MeanForms::Functional));
  m.impl("mean.out", TORCH_FN(MeanForms::Out));
  m.impl("linalg_vector_norm", TORCH_FN(VectorNormForms::Functional));
  m.impl("linalg_vector_norm.out", TORCH_FN(VectorNormForms::Out));
  m.impl("amax", TORCH_FN(AmaxForms::Functional));
  m.impl("amax.out", TORCH_FN(AmaxForms::Out));
  m.impl("amin", TORCH_FN(AminForms::Functional));
  m.impl("amin.out", TORCH_FN(AminForms::Out));
  m.impl("argmax", TORCH_FN(ArgmaxForms::Functional));
  m.impl("argmax.out", TORCH_FN(ArgmaxForms::Out));
  m.impl("argmin", TORCH_FN(ArgminForms::Functional));
  m.impl("argmin.out", TORCH_FN(ArgminForms::Out));
  m.impl("any.dim", TORCH_FN(AnyDimForms::Functional));
  m.impl("any.out", TORCH_FN(AnyDimForms::Out));
  m.impl("any.dims", TORCH_FN(AnyDimsForms::Functional));
  m.impl("any.dims_out", TORCH_FN(AnyDimsForms::Out));
  m.impl("any", TORCH_FN(AnyAllForms::Functional));
  m.impl("any.all_out", TORCH_FN(AnyAllForms::Out));
  m.impl("all.dim", TORCH_FN(AllDimForms::Functional));
  m.impl("all.out", TORCH_FN(AllDimForms::Out));
  m.impl("all.dims", TORCH_FN(AllDimsForms::Functional));
  m.impl("all.dims_out", TORCH_FN(AllDimsForms::Out));
  m.impl("all", TORCH_FN(AllAllForms::Functional));
  m.impl("all.all_out", TORCH_FN(AllAllForms::Out));
  m.impl("max.dim", TORCH_FN(MaxDim::Functional));
  m.impl("max.dim_max", TORCH_FN(MaxDim::Out));
  m.impl("min.dim", TORCH_FN(MinDim::Functional));
  m.impl("min.dim_min", TORCH_FN(MinDim::Out));
}

}  // namespace openreg
