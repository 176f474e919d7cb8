// Checks of a collective's tensors, made on the calling thread before any
// work is enqueued, so that a mistake raises at the call with what was
// expected, what was found and how to fix it (never inside Gloo, on a driver
// thread, or as a hang on a peer).
//
// Thread-safety: pure functions.
#ifndef OPENREG_CORE_DISTRIBUTED_TENSOR_CHECKS_H_
#define OPENREG_CORE_DISTRIBUTED_TENSOR_CHECKS_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace openreg {

// Every tensor is a dense, contiguous openreg tensor, all on one device: the
// process group's device when it has one (`bound`), else the first tensor's.
// Returns that device.
absl::StatusOr<c10::DeviceIndex> CheckDeviceTensors(
    absl::string_view op, const std::vector<at::Tensor>& tensors,
    std::optional<c10::DeviceIndex> bound);

// `tensors` holds exactly `expected` tensors (one per rank).
absl::Status CheckListLength(absl::string_view op, absl::string_view what,
                             const std::vector<at::Tensor>& tensors,
                             int64_t expected);

// `found` has the dtype and number of elements of `reference`.
absl::Status CheckSameDtypeAndNumel(absl::string_view op,
                                    absl::string_view what,
                                    const at::Tensor& reference,
                                    const at::Tensor& found);

// `large` has `small`'s dtype and `factor` times its elements (a
// world-size-sized concatenation of `small`).
absl::Status CheckConcatenation(absl::string_view op, const at::Tensor& small,
                                const at::Tensor& large, int64_t factor);

// Split sizes of all_to_all_single: empty (even split of dim 0 by the world
// size) or one entry per rank summing to dim 0 of `tensor`.
absl::Status CheckSplits(absl::string_view op, absl::string_view what,
                         const at::Tensor& tensor,
                         const std::vector<int64_t>& splits, int world_size);

}  // namespace openreg

#endif  // OPENREG_CORE_DISTRIBUTED_TENSOR_CHECKS_H_
