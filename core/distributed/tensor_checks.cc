#include "core/distributed/tensor_checks.h"

#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace openreg {
namespace {

std::string DeviceName(const at::Tensor& tensor) { return tensor.device().str(); }

}  // namespace

absl::StatusOr<c10::DeviceIndex> CheckDeviceTensors(
    absl::string_view op, const std::vector<at::Tensor>& tensors,
    std::optional<c10::DeviceIndex> bound) {
  std::optional<c10::DeviceIndex> device = bound;
  for (const at::Tensor& tensor : tensors) {
    if (!tensor.defined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, " on the openreg backend: expected openreg tensors, found an "
              "undefined tensor."));
    }
    if (tensor.device().type() != c10::DeviceType::PrivateUse1) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, " on the openreg backend: expected tensors on an openreg "
              "device, found a tensor on ",
          DeviceName(tensor),
          ". Move it with .to('openreg'), or give the process group a CPU "
          "backend too (init_process_group(backend='cpu:gloo,openreg:openreg'"
          ")) and pass CPU tensors to that."));
    }
    if (tensor.layout() != c10::kStrided || !tensor.is_contiguous()) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, " on the openreg backend: expected dense contiguous tensors, "
              "found one with sizes [",
          absl::StrJoin(tensor.sizes(), ", "), "] and strides [",
          absl::StrJoin(tensor.strides(), ", "),
          "]. Pass tensor.contiguous() instead."));
    }
    if (!device.has_value()) {
      device = tensor.device().index();
    } else if (tensor.device().index() != *device) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, " on the openreg backend: expected every tensor on openreg:",
          *device,
          bound.has_value() ? " (the device this process group is bound to)"
                            : " (the device of the first tensor)",
          ", found one on ", DeviceName(tensor),
          ". Each rank uses one device (by convention openreg:<local_rank % "
          "device_count>): create the tensors there, or pass device_id to "
          "init_process_group."));
    }
  }
  if (!device.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, " on the openreg backend: expected at least one tensor, found "
            "none."));
  }
  return *device;
}

absl::Status CheckListLength(absl::string_view op, absl::string_view what,
                             const std::vector<at::Tensor>& tensors,
                             int64_t expected) {
  if (static_cast<int64_t>(tensors.size()) == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      op, ": expected ", expected, " ", what,
      ", found ", tensors.size(), "."));
}

absl::Status CheckSameDtypeAndNumel(absl::string_view op,
                                    absl::string_view what,
                                    const at::Tensor& reference,
                                    const at::Tensor& found) {
  if (reference.scalar_type() == found.scalar_type() &&
      reference.numel() == found.numel()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      op, ": expected ", what, " of dtype ",
      c10::toString(reference.scalar_type()), " with ", reference.numel(),
      " elements, found dtype ", c10::toString(found.scalar_type()), " with ",
      found.numel(), " elements."));
}

absl::Status CheckConcatenation(absl::string_view op, const at::Tensor& small,
                                const at::Tensor& large, int64_t factor) {
  if (small.scalar_type() == large.scalar_type() &&
      small.numel() * factor == large.numel()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      op, ": expected the large tensor to hold world size (", factor,
      ") times the elements of the small one (", small.numel() * factor,
      " elements of ", c10::toString(small.scalar_type()), "), found ",
      large.numel(), " elements of ", c10::toString(large.scalar_type()),
      ". Size the large tensor as world_size * small.numel()."));
}

absl::Status CheckSplits(absl::string_view op, absl::string_view what,
                         const at::Tensor& tensor,
                         const std::vector<int64_t>& splits, int world_size) {
  const int64_t rows = tensor.dim() == 0 ? 1 : tensor.size(0);
  if (splits.empty()) {
    if (rows % world_size == 0) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": without split sizes, dim 0 of the ", what,
        " must divide evenly by the world size ", world_size, "; found ",
        rows, ". Pass ", what, "_split_sizes."));
  }
  const int64_t total = std::accumulate(splits.begin(), splits.end(), int64_t{0});
  if (static_cast<int>(splits.size()) == world_size && total == rows) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      op, ": expected ", world_size, " ", what,
      " split sizes summing to dim 0 of the ", what, " (", rows, "), found [",
      absl::StrJoin(splits, ", "), "]."));
}

}  // namespace openreg
