// Catches collectives whose tensors disagree across ranks before Gloo sees
// them.
//
// Only the peers can tell that rank 0 all-reduces 4 floats while rank 1
// all-reduces 8: Gloo itself then aborts the process from its I/O thread
// ("Received data size doesn't match expected size") or hangs. So each
// collective whose every rank must contribute alike first exchanges a small
// signature (which collective, dtype, element count) with a Gloo all_gather
// of 3 integers per rank, and fails with a message naming every rank's
// signature when they differ. Collectives whose ranks may legitimately differ
// (all_to_all, send/recv) skip it.
//
// Thread-safety: runs inside a collective's enqueued work, in issue order.
#ifndef OPENREG_CORE_DISTRIBUTED_CROSS_RANK_CHECK_H_
#define OPENREG_CORE_DISTRIBUTED_CROSS_RANK_CHECK_H_

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace openreg {

struct CollectiveSignature {
  int64_t op;  // c10d::OpType
  int64_t dtype;
  int64_t numel;
};

// The signature of `tensors`, which every rank contributes alike.
CollectiveSignature SignatureOf(c10d::OpType op,
                                const std::vector<at::Tensor>& tensors);

// Exchanges `mine` with every rank of `gloo`'s group; an error naming the
// ranks and what each has when they differ. Throws what Gloo throws.
absl::Status CheckSameAcrossRanks(c10d::Backend& gloo, absl::string_view name,
                                  const CollectiveSignature& mine,
                                  std::chrono::milliseconds timeout);

}  // namespace openreg

#endif  // OPENREG_CORE_DISTRIBUTED_CROSS_RANK_CHECK_H_
