// Backend metadata of openreg tensors: named boolean flags attached to one
// tensor (its TensorImpl, not its storage), carried through torch.save and
// torch.load.
//
// PyTorch lets a PrivateUse1 backend hang a c10::BackendMeta on a TensorImpl
// and serialize it as a map of string to bool next to the tensor (the map
// also carries torch's own "conj"/"neg" bits). openreg has no layout state of
// its own to put there, so it offers the mechanism itself: a library built on
// openreg can tag tensors (a format, a "quantized-like" marker, ...) and the
// tags survive a save/load round trip. Serialized keys are the flag names
// prefixed with "openreg." so they never collide with torch's keys.
//
// Thread-safety: as for any tensor metadata, the caller must not change a
// tensor's flags while another thread reads them.
#ifndef OPENREG_CORE_TORCH_RUNTIME_BACKEND_META_H_
#define OPENREG_CORE_TORCH_RUNTIME_BACKEND_META_H_

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace openreg {

using BackendFlags = std::map<std::string, bool>;

// Replaces the flags of `tensor`, an openreg tensor. Names must be non-empty;
// an empty map removes the metadata.
absl::Status SetBackendFlags(const at::Tensor& tensor, const BackendFlags& flags);

// The flags of `tensor` (empty when none were set).
absl::StatusOr<BackendFlags> GetBackendFlags(const at::Tensor& tensor);

// The pair torch's pickler calls (torch::jit::TensorBackendMetaRegistry):
// write the flags into `metadata`, and read them back from it.
void SerializeBackendFlags(const at::Tensor& tensor,
                           std::unordered_map<std::string, bool>& metadata);
void DeserializeBackendFlags(const at::Tensor& tensor,
                             std::unordered_map<std::string, bool>& metadata);

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_BACKEND_META_H_
