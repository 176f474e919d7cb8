// What the fallback needs to know about an operator, read off its schema
// once.
//
// The fallback runs for every op on openreg; asking the schema each call
// (which arguments are written, which take a generator, how the results
// relate to the arguments, which overload is the out= variant) cost a
// sizeable share of a tiny op. FactsOf computes them on an op's first call
// and keeps them for the life of the process, looked up by the address of
// the op's registration (stable while the op is registered) and checked
// against its name and arity, so an op registered again at a reused address
// is classified anew.
//
// Thread-safety: FactsOf may be called from any thread. Each thread has its
// own lookup table in front of a shared one guarded by a mutex; OpFacts are
// immutable once published (but for result_ordinals, atomics of their own)
// and never destroyed.
#ifndef OPENREG_CORE_ATEN_OP_FACTS_H_
#define OPENREG_CORE_ATEN_OP_FACTS_H_

#include <ATen/core/dispatch/Dispatcher.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "core/aten/result_memory_plan.h"

namespace openreg {

// How an op's results relate to its arguments.
enum class ResultKind {
  kWrittenArguments,  // every result is a written argument (or there is none)
  kFreshTensors,      // every result is a new tensor or tensor list
  kOther,             // views, optional or non-tensor results, mixtures
};

struct OpFacts {
  explicit OpFacts(c10::OperatorName name) : name(std::move(name)) {}

  c10::OperatorName name;
  // The schema's name, for error messages and work names.
  std::string schema_name;
  size_t argument_count = 0;
  ResultKind result_kind = ResultKind::kOther;
  // Per argument: written (alias info with a write), and out= arguments.
  absl::InlinedVector<bool, 8> written;
  absl::InlinedVector<bool, 8> is_out;
  bool has_out_arguments = false;
  // Arguments of type Generator or Generator?.
  absl::InlinedVector<size_t, 2> generator_arguments;
  // kWrittenArguments: for each result, the argument it is.
  absl::InlinedVector<size_t, 2> result_arguments;
  // kFreshTensors: the out= overload the kernel runs as, if there is one.
  std::optional<c10::OperatorHandle> out_variant;
  // kFreshTensors without an out= overload: which of the kernel's
  // allocations became each result, learned run by run. The one part of the
  // facts that changes after they are published (thread-safe by itself).
  mutable ResultOrdinals result_ordinals;
  // Index ops accept index tensors on the CPU.
  bool accepts_cpu_tensors = false;
  // An in-place op whose CPU kernel may give `self` a new shape, so its
  // result's shape is only known once it ran.
  bool resizes_self = false;
};

const OpFacts& FactsOf(const c10::OperatorHandle& op);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_OP_FACTS_H_
