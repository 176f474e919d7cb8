#include "core/distributed/cross_rank_check.h"

#include <ATen/ops/empty.h>

#include "absl/strings/str_cat.h"

namespace openreg {
namespace {

constexpr int64_t kSignatureLength = 3;

std::string Describe(const CollectiveSignature& signature) {
  return absl::StrCat(
      c10d::opTypeToString(static_cast<c10d::OpType>(signature.op)), " of ",
      signature.numel, " ",
      c10::toString(static_cast<c10::ScalarType>(signature.dtype)),
      " elements");
}

// A CPU tensor holding `signature`; Gloo's send keeps it alive until sent.
at::Tensor SignatureTensor(const CollectiveSignature& signature) {
  at::Tensor tensor = at::empty({kSignatureLength}, at::kLong);
  int64_t* data = tensor.mutable_data_ptr<int64_t>();
  data[0] = signature.op;
  data[1] = signature.dtype;
  data[2] = signature.numel;
  return tensor;
}

CollectiveSignature SignatureIn(const at::Tensor& tensor) {
  const int64_t* data = tensor.const_data_ptr<int64_t>();
  return {data[0], data[1], data[2]};
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

CrossRankCheck::CrossRankCheck(c10d::Backend& gloo) : gloo_(gloo) {}

void CrossRankCheck::PostReceives() {
  const int size = gloo_.getSize();
  const int rank = gloo_.getRank();
  inbox_.assign(size, at::Tensor());
  receives_.assign(size, nullptr);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    std::vector<at::Tensor> buffer = {at::empty({kSignatureLength}, at::kLong)};
    inbox_[peer] = buffer.front();
    receives_[peer] = gloo_.recv(buffer, peer, kSignatureTag);
  }
}

absl::Status CrossRankCheck::Check(absl::string_view name,
                                   const CollectiveSignature& mine,
                                   std::chrono::milliseconds timeout) {
  absl::MutexLock lock(&mutex_);
  const int size = gloo_.getSize();
  const int rank = gloo_.getRank();
  if (receives_.empty()) PostReceives();
  std::vector<CollectiveSignature> signatures(size, mine);
  bool agree = true;
  try {
    std::vector<at::Tensor> message = {SignatureTensor(mine)};
    std::vector<c10::intrusive_ptr<c10d::Work>> sends;
    for (int peer = 0; peer < size; ++peer) {
      if (peer != rank)
        sends.push_back(gloo_.send(message, peer, kSignatureTag));
    }
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      receives_[peer]->wait(timeout);
      signatures[peer] = SignatureIn(inbox_[peer]);
      agree = agree && signatures[peer] == mine;
    }
    // Also after a disagreement: every rank took part in this exchange, so
    // the next one pairs up as usual.
    PostReceives();
    for (const auto& send : sends) send->wait(timeout);
  } catch (...) {
    // Gloo closed the group's connections; nothing pending is worth keeping.
    inbox_.clear();
    receives_.clear();
    throw;
  }
  if (agree) return absl::OkStatus();
  std::string message = absl::StrCat(
      name,
      ": the ranks' tensors disagree, every rank must pass the same "
      "collective with the same dtype and number of elements. Found:");
  for (int peer = 0; peer < size; ++peer) {
    absl::StrAppend(&message, peer == 0 ? " " : "; ", "rank ", peer, ": ",
                    Describe(signatures[peer]));
  }
  return absl::InvalidArgumentError(message);
}

}  // namespace openreg
