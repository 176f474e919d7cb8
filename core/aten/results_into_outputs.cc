#include "core/aten/results_into_outputs.h"

#include <ATen/ops/copy_ops.h>
#include <c10/core/DispatchKeySet.h>

#include <cstddef>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "core/aten/kernel_memory.h"

namespace openreg {
namespace {

// Whether `result` is laid out as its output's alias `into` (in whatever
// memory).
bool SameView(const at::Tensor& result, const at::Tensor& into) {
  return result.dtype() == into.dtype() && result.sizes() == into.sizes() &&
         result.strides() == into.strides() &&
         result.storage_offset() == into.storage_offset() &&
         result.is_conj() == into.is_conj() && result.is_neg() == into.is_neg();
}

// Straight to the CPU copy: aliases made on a thread in inference mode are
// inference tensors, which autograd's copy_ refuses to write on a driver
// thread outside it.
void CopyInto(const at::Tensor& into, const at::Tensor& result) {
  at::Tensor destination = into;
  at::_ops::copy_::redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU),
                              destination, result, /*non_blocking=*/false);
}

}  // namespace

void OfferOutputMemory(const KernelOutputs& outputs, ResultMemoryPlan& plan) {
  for (size_t i = 0; i < outputs.into.size(); ++i) {
    const at::Tensor& into = outputs.into[i];
    if (!into.defined()) continue;
    void* const memory = into.storage().mutable_data();
    if (!MayLendOutputMemory(memory)) continue;
    plan.AddOutput(i, memory, into.storage().nbytes());
  }
}

void PlaceResults(absl::Span<const at::Tensor> results,
                  const KernelOutputs& outputs, ResultMemoryPlan& plan,
                  const std::string& op_name) {
  TORCH_INTERNAL_ASSERT(results.size() == outputs.into.size(), op_name, ": ",
                        results.size(), " results for ", outputs.into.size(),
                        " outputs");
  const auto lent_memory = plan.LentMemory();
  auto in_lent_memory = [&lent_memory](const at::Tensor& result) {
    for (const auto& lent : lent_memory) {
      if (result.storage().data() == lent.first) return true;
    }
    return false;
  };
  // The results still to be copied. One in lent memory (its own output's
  // with another layout, or another output's: ordinals learned on other
  // shapes can cross two outputs of one size) is cloned out of it before
  // any output is written.
  absl::InlinedVector<std::pair<at::Tensor, size_t>, 4> to_copy;
  for (size_t i = 0; i < results.size(); ++i) {
    const at::Tensor& result = results[i];
    const at::Tensor& into = outputs.into[i];
    // The caller planned which results are defined (the fallback from the
    // op's meta kernel) and holds undefined tensors for the others.
    TORCH_INTERNAL_ASSERT(into.defined() == result.defined(), op_name,
                          ": the CPU kernel and the outputs planned for it "
                          "disagree on which results are defined");
    if (!into.defined()) continue;
    const bool same_view = SameView(result, into);
    if (plan.Learn(i, result.storage().data(), same_view) && same_view) {
      continue;  // computed in place
    }
    to_copy.emplace_back(in_lent_memory(result) ? result.clone() : result, i);
  }
  for (const auto& [result, i] : to_copy) CopyInto(outputs.into[i], result);
  for (const auto& [lent, result_index] : lent_memory) {
    c10::StorageImpl* holder = nullptr;
    for (const at::Tensor& result : results) {
      if (result.defined() && result.storage().data() == lent) {
        holder = result.storage().unsafeGetStorageImpl();
      }
    }
    if (EndLoan(lent, holder, outputs.storages[result_index])) continue;
    plan.NeverLend();
    TORCH_CHECK(false, "openreg internal error: the CPU kernel of ", op_name,
                " kept a buffer past its return in memory openreg had lent "
                "it from the op's output, so the two now share memory. Its "
                "results are right, but the kernel's buffer is not; openreg "
                "lends this op no memory again. Please report the op.");
  }
}

}  // namespace openreg
