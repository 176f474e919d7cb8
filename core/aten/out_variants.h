// The out= overload of a functional ATen op, so a kernel can write its
// results straight into outputs allocated before it runs.
//
// ATen names out= overloads inconsistently (add.out, sum.IntList_out,
// max.dim_max, topk.values), so they are found by shape instead: same name,
// the functional op's arguments first (same names and types), then one
// written out= argument per tensor (or tensor list) the functional op
// returns.
//
// Overloads ATen generated (tag `generated`) are skipped: they run the
// functional kernel and copy its results, which the fallback does better
// itself (Note [Results computed in their outputs' memory]).
//
// Thread-safety: lookups are cached under a mutex; call from any thread.
#ifndef OPENREG_CORE_ATEN_OUT_VARIANTS_H_
#define OPENREG_CORE_ATEN_OUT_VARIANTS_H_

#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>

namespace openreg {

std::optional<c10::OperatorHandle> FindOutVariant(const c10::OperatorHandle& op);

// Whether the ops named `name` have an out= overload that does not compute
// the functional result into an output of that result's shape: with a
// reduction, it takes `out` as its elementwise buffer, of the input's shape,
// and reduces in it afterwards. Given the scalar the functional op returns,
// binary_cross_entropy.out reduces the first element only; mse_loss.out,
// smooth_l1_loss.out and huber_loss.out resize it to the input's shape
// first, which allocates a buffer of that size and raises ATen's
// deprecation warning about resizing a non-empty output, which CPU eager
// never gives for these calls. FindOutVariant finds no out= overload for
// them.
bool OutOverloadHasOtherContract(const c10::OperatorName& name);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_OUT_VARIANTS_H_
