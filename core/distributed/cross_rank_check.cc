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

absl::Status CheckSameAcrossRanks(c10d::Backend& gloo, absl::string_view name,
                                  const CollectiveSignature& mine,
                                  std::chrono::milliseconds timeout) {
  const int size = gloo.getSize();
  const int rank = gloo.getRank();
  // Receives are posted before the sends, so a peer's signature lands in
  // its tensor as soon as it arrives.
  std::vector<at::Tensor> received(size);
  std::vector<c10::intrusive_ptr<c10d::Work>> receives(size);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    std::vector<at::Tensor> buffer = {at::empty({kSignatureLength}, at::kLong)};
    received[peer] = buffer.front();
    receives[peer] = gloo.recv(buffer, peer, kSignatureTag);
  }
  std::vector<at::Tensor> message = {SignatureTensor(mine)};
  std::vector<c10::intrusive_ptr<c10d::Work>> sends;
  for (int peer = 0; peer < size; ++peer) {
    if (peer != rank) sends.push_back(gloo.send(message, peer, kSignatureTag));
  }
  std::vector<CollectiveSignature> signatures(size, mine);
  bool agree = true;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    receives[peer]->wait(timeout);
    signatures[peer] = SignatureIn(received[peer]);
    agree = agree && signatures[peer] == mine;
  }
  for (const auto& send : sends) send->wait(timeout);
  if (agree) return absl::OkStatus();
  std::string message_text = absl::StrCat(
      name,
      ": the ranks' tensors disagree, every rank must pass the same "
      "collective with the same dtype and number of elements. Found:");
  for (int peer = 0; peer < size; ++peer) {
    absl::StrAppend(&message_text, peer == 0 ? " " : "; ", "rank ", peer, ": ",
                    Describe(signatures[peer]));
  }
  return absl::InvalidArgumentError(message_text);
}

}  // namespace openreg
