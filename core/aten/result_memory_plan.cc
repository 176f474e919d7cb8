#include "core/aten/result_memory_plan.h"

namespace openreg {

ResultOrdinals::ResultOrdinals() {
  for (std::atomic<int>& ordinal : ordinals_) {
    ordinal.store(kUnknown, std::memory_order_relaxed);
  }
}

int ResultOrdinals::Get(size_t result) const {
  if (result >= kResults || never_lend_.load(std::memory_order_relaxed)) {
    return kUnknown;
  }
  return ordinals_[result].load(std::memory_order_relaxed);
}

void ResultOrdinals::Set(size_t result, int ordinal) {
  if (result >= kResults) return;
  ordinals_[result].store(ordinal, std::memory_order_relaxed);
}

void ResultOrdinals::NeverLend() {
  never_lend_.store(true, std::memory_order_relaxed);
}

void ResultMemoryPlan::AddOutput(size_t result, void* data, size_t nbytes) {
  if (data == nullptr || nbytes == 0) return;
  outputs_.push_back(
      Output{result, data, nbytes, ordinals_.Get(result), /*lent=*/false});
}

int ResultMemoryPlan::CountOfSize(size_t nbytes) const {
  int count = 0;
  for (const Allocation& allocation : allocations_) {
    count += allocation.nbytes == nbytes;
  }
  return count;
}

bool ResultMemoryPlan::IsOutputSize(size_t nbytes) const {
  for (const Output& output : outputs_) {
    if (output.nbytes == nbytes) return true;
  }
  return false;
}

void* ResultMemoryPlan::Lend(size_t nbytes) {
  if (!IsOutputSize(nbytes)) return nullptr;
  const int ordinal = CountOfSize(nbytes);
  for (Output& output : outputs_) {
    if (output.nbytes == nbytes && output.ordinal == ordinal && !output.lent) {
      output.lent = true;
      allocations_.push_back(Allocation{nbytes, output.data});
      return output.data;
    }
  }
  return nullptr;
}

void ResultMemoryPlan::Record(size_t nbytes, const void* data) {
  if (IsOutputSize(nbytes)) allocations_.push_back(Allocation{nbytes, data});
}

bool ResultMemoryPlan::Learn(size_t result, const void* result_data,
                             bool fits) {
  for (const Output& output : outputs_) {
    if (output.result != result) continue;
    // The last allocation at the result's address is the result: a buffer
    // freed earlier in the kernel may have had the same address.
    int ordinal = 0;
    int learned = ResultOrdinals::kUnknown;
    for (const Allocation& allocation : allocations_) {
      if (allocation.nbytes != output.nbytes) continue;
      if (allocation.data == result_data) learned = ordinal;
      ++ordinal;
    }
    ordinals_.Set(result, fits ? learned : ResultOrdinals::kUnknown);
    return output.lent && result_data == output.data;
  }
  return false;
}

absl::InlinedVector<std::pair<void*, size_t>, 2>
ResultMemoryPlan::LentMemory() const {
  absl::InlinedVector<std::pair<void*, size_t>, 2> lent;
  for (const Output& output : outputs_) {
    if (output.lent) lent.emplace_back(output.data, output.result);
  }
  return lent;
}

}  // namespace openreg
