// Note [Results computed in their outputs' memory]
//
// Some ops run a functional CPU kernel and copy each result into an output
// the caller already holds: ops without an out= overload, and ops whose
// out= overload ATen generated (tag `generated`), which is the same
// functional kernel followed by a copy. On convolution that copy is a
// whole pass over the output (4 MiB, about 6% of a conv2d in the bench)
// on top of the reorder oneDNN already does. The result is usually one of
// the kernel's own allocations, and those go through KernelMemoryRouter
// (Note [Kernel allocations in device memory]); if the right allocation is
// served from the output's memory, the result is computed in place and the
// copy is skipped.
//
// Which allocation becomes the result is not known when it is made: a
// convolution first allocates oneDNN's blocked result and then the dense
// tensor it reorders that into, both of the output's size. So the plan
// learns it: after each run it records, per op and result, the ordinal of
// the result's allocation among the kernel's allocations of the output's
// size, and on the next run lends the output's memory to that allocation
// only. When it guesses wrong (another allocation took the memory, or the
// result came from elsewhere) the result is copied as before, and the
// ordinal is learned again. A guess can also cross two outputs of one size
// (ordinals learned on other shapes): results found in lent memory not
// theirs are cloned out of it before any output is written.
//
// Lending the output's memory to a kernel is safe because nothing else may
// touch a fresh output until its kernel finished (a caller that drops it
// first gives its memory to work enqueued later: Note [Stream-ordered
// reuse]), and the loan ends when the kernel returns: a result holding the
// memory keeps pointing at it without owning it, and a scratch buffer that
// took it has been freed. An allocation that took it and is still alive
// after the kernel returned (a kernel keeping a buffer in a cache) would
// share memory with the output, or with whatever took a dropped output's
// memory; the fallback reports that as an internal error of the op, never
// silently, and lends that op nothing again (cpu_fallback.cc).
//
// Thread-safety: a ResultMemoryPlan belongs to one kernel run on one
// thread. ResultOrdinals are shared by every run of an op, on any thread;
// their entries are relaxed atomics, since a stale one only costs a copy.
#ifndef OPENREG_CORE_ATEN_RESULT_MEMORY_PLAN_H_
#define OPENREG_CORE_ATEN_RESULT_MEMORY_PLAN_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <utility>

#include "absl/container/inlined_vector.h"

namespace openreg {

// For each result of an op, the ordinal its last run learned (see above),
// or kUnknown.
class ResultOrdinals {
 public:
  // Results past this many are copied, as before.
  static constexpr size_t kResults = 4;
  static constexpr int kUnknown = -1;

  ResultOrdinals();
  ResultOrdinals(const ResultOrdinals&) = delete;
  ResultOrdinals& operator=(const ResultOrdinals&) = delete;

  int Get(size_t result) const;
  void Set(size_t result, int ordinal);

  // From now on every Get is kUnknown: for an op whose kernel kept memory
  // it was lent.
  void NeverLend();

 private:
  std::array<std::atomic<int>, kResults> ordinals_;
  std::atomic<bool> never_lend_{false};
};

// One kernel run's offer of its outputs' memory to its own allocations.
class ResultMemoryPlan {
 public:
  explicit ResultMemoryPlan(ResultOrdinals& ordinals) : ordinals_(ordinals) {}

  // Result `result` is to be copied into `nbytes` of memory at `data`, as
  // the kernel sees it. Outputs with no memory are left out.
  void AddOutput(size_t result, void* data, size_t nbytes);

  // For a kernel allocation of `nbytes`: the output memory lent to it, or
  // nullptr, and then the caller allocates and reports it with Record.
  void* Lend(size_t nbytes);
  void Record(size_t nbytes, const void* data);

  // After the kernel returned, with `result_data` the start of result
  // `result`'s storage: whether that is its output's memory, lent in this
  // run. Also learns, for the next run, which allocation became the result,
  // if it `fits` the output (its layout): a result laid out otherwise would
  // have to be copied out of the output's memory and back.
  bool Learn(size_t result, const void* result_data, bool fits);

  // The output memory lent in this run, with the result whose output it is.
  absl::InlinedVector<std::pair<void*, size_t>, 2> LentMemory() const;

  // The op's kernel kept memory it was lent: no run of the op is lent any
  // again (ResultOrdinals::NeverLend).
  void NeverLend() { ordinals_.NeverLend(); }

 private:
  struct Output {
    size_t result;
    void* data;
    size_t nbytes;
    int ordinal;  // from ResultOrdinals, at the start of the run
    bool lent;
  };
  struct Allocation {
    size_t nbytes;
    const void* data;
  };

  // How many allocations of `nbytes` were made so far.
  int CountOfSize(size_t nbytes) const;
  bool IsOutputSize(size_t nbytes) const;

  ResultOrdinals& ordinals_;
  absl::InlinedVector<Output, 3> outputs_;
  // The kernel's allocations of its outputs' sizes, in order.
  absl::InlinedVector<Allocation, 8> allocations_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_RESULT_MEMORY_PLAN_H_
