// Catches collectives whose tensors disagree across ranks before Gloo sees
// them.
//
// Only the peers can tell that rank 0 all-reduces 4 floats while rank 1
// all-reduces 8: Gloo itself then aborts the process from its I/O thread
// ("Received data size doesn't match expected size") or hangs. So each
// collective whose every rank must contribute alike first exchanges a small
// signature (which collective, dtype, element count) with every peer, and
// fails with a message naming every rank's signature when they differ.
// Collectives whose ranks may legitimately differ (all_to_all, send/recv)
// skip it.
//
// The exchange is Gloo point-to-point messages on a reserved tag
// (kSignatureTag), sent and received on the thread that runs the
// collective's work, with each peer's receive for the next check posted as
// soon as the current one completes. Why both:
// - A Gloo collective (an all_gather of the signatures) runs on Gloo's worker
//   thread: handing it there and back cost a DDP step about five thread
//   wake-ups (docs/performance.md, "The DDP step").
// - A Gloo send waits for the peer's recv-ready notice before the data goes
//   out. Posted only when the check starts, that notice costs a trip through
//   both processes' I/O threads before the data's own trip; posted one check
//   ahead, it has arrived long before, and the data leaves at once.
//
// Thread-safety: Check runs inside a collective's enqueued work, in the
// group's issue order; mutex_ guards the pending receives all the same.
#ifndef OPENREG_CORE_DISTRIBUTED_CROSS_RANK_CHECK_H_
#define OPENREG_CORE_DISTRIBUTED_CROSS_RANK_CHECK_H_

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace openreg {

// The Gloo send/recv tag of signature messages; the backend refuses it for
// users' own send and recv, so the two never match each other.
inline constexpr int kSignatureTag = std::numeric_limits<int>::max();

struct CollectiveSignature {
  int64_t op;  // c10d::OpType
  int64_t dtype;
  int64_t numel;

  friend bool operator==(const CollectiveSignature&,
                         const CollectiveSignature&) = default;
};

// The signature of `tensors`, which every rank contributes alike.
CollectiveSignature SignatureOf(c10d::OpType op,
                                const std::vector<at::Tensor>& tensors);

// One process group's exchange of signatures. Every rank of the group calls
// Check for the same collectives in the same order (the group's issue
// order), so the k-th message from a peer on kSignatureTag is always the
// peer's k-th signature.
class CrossRankCheck {
 public:
  // `gloo` must outlive this object (the owning group holds both).
  explicit CrossRankCheck(c10d::Backend& gloo);

  // Exchanges `mine` with every rank of the group; an error naming the
  // ranks and what each has when they differ. Throws what Gloo throws (a
  // peer that never arrives: Gloo's timeout); the group is unusable after.
  absl::Status Check(absl::string_view name, const CollectiveSignature& mine,
                     std::chrono::milliseconds timeout)
      ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  // Posts a receive from every peer for the next signature.
  void PostReceives() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  c10d::Backend& gloo_;
  absl::Mutex mutex_;
  // Per rank (none for this rank): where the peer's next signature lands,
  // and its receive; empty until the first check and after a failure.
  std::vector<at::Tensor> inbox_ ABSL_GUARDED_BY(mutex_);
  std::vector<c10::intrusive_ptr<c10d::Work>> receives_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace openreg

#endif  // OPENREG_CORE_DISTRIBUTED_CROSS_RANK_CHECK_H_
