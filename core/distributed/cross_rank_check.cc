#include "core/distributed/cross_rank_check.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/tensor.h>

#include "absl/strings/str_cat.h"

namespace openreg {
namespace {

std::string Describe(const int64_t* signature) {
  return absl::StrCat(
      c10d::opTypeToString(static_cast<c10d::OpType>(signature[0])), " of ",
      signature[2], " ",
      c10::toString(static_cast<c10::ScalarType>(signature[1])), " elements");
}

}  // namespace

CollectiveSignature SignatureOf(c10d::OpType op,
                                const std::vector<at::Tensor>& tensors) {
  CollectiveSignature signature{static_cast<int64_t>(op), -1, 0};
  for (const at::Tensor& tensor : tensors) {
    signature.dtype = static_cast<int64_t>(tensor.scalar_type());
    signature.numel += tensor.numel();
  }
  return signature;
}

absl::Status CheckSameAcrossRanks(c10d::Backend& gloo, absl::string_view name,
                                  const CollectiveSignature& mine,
                                  std::chrono::milliseconds timeout) {
  const int size = gloo.getSize();
  std::vector<at::Tensor> input = {
      at::tensor({mine.op, mine.dtype, mine.numel}, at::kLong)};
  std::vector<std::vector<at::Tensor>> output(1);
  for (int rank = 0; rank < size; ++rank) {
    output[0].push_back(at::empty({3}, at::kLong));
  }
  c10d::AllgatherOptions options;
  options.timeout = timeout;
  gloo.allgather(output, input, options)->wait(timeout);
  bool agree = true;
  for (int rank = 1; rank < size; ++rank) {
    agree = agree && output[0][rank].equal(output[0][0]);
  }
  if (agree) return absl::OkStatus();
  std::string message = absl::StrCat(
      name, ": the ranks' tensors disagree, every rank must pass the same "
            "collective with the same dtype and number of elements. Found:");
  for (int rank = 0; rank < size; ++rank) {
    absl::StrAppend(&message, rank == 0 ? " " : "; ", "rank ", rank, ": ",
                    Describe(output[0][rank].const_data_ptr<int64_t>()));
  }
  return absl::InvalidArgumentError(message);
}

}  // namespace openreg
