#include "core/torch_runtime/backend_meta.h"

#include <c10/core/TensorImpl.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/torch_runtime/torch_status.h"

namespace openreg {
namespace {

constexpr char kSerializedPrefix[] = "openreg.";

class FlagsMeta final : public c10::BackendMeta {
 public:
  explicit FlagsMeta(BackendFlags flags) : flags_(std::move(flags)) {}

  const BackendFlags& flags() const { return flags_; }

  // A copied TensorImpl (shallow_copy_and_detach, as in detach()) gets its
  // own copy, so changing one tensor's flags never changes another's.
  c10::intrusive_ptr<c10::BackendMeta> clone(
      const c10::intrusive_ptr<c10::BackendMeta>& /*self*/) const override {
    return c10::make_intrusive<FlagsMeta>(flags_);
  }

 private:
  BackendFlags flags_;
};

absl::Status CheckOpenRegTensor(const at::Tensor& tensor) {
  if (!tensor.defined()) {
    return absl::InvalidArgumentError(
        "backend flags need a defined openreg tensor, got an undefined one.");
  }
  if (tensor.device().type() != c10::DeviceType::PrivateUse1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "backend flags can only be attached to openreg tensors, got a tensor "
        "on ", tensor.device().str(), "; move it with .to(\"openreg\") first."));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SetBackendFlags(const at::Tensor& tensor, const BackendFlags& flags) {
  if (absl::Status status = CheckOpenRegTensor(tensor); !status.ok()) {
    return status;
  }
  for (const auto& [name, value] : flags) {
    if (name.empty()) {
      return absl::InvalidArgumentError(
          "backend flag names must be non-empty strings, got ''.");
    }
  }
  tensor.unsafeGetTensorImpl()->set_backend_meta(
      flags.empty() ? nullptr : c10::make_intrusive<FlagsMeta>(flags));
  return absl::OkStatus();
}

absl::StatusOr<BackendFlags> GetBackendFlags(const at::Tensor& tensor) {
  if (absl::Status status = CheckOpenRegTensor(tensor); !status.ok()) {
    return status;
  }
  const auto* meta =
      dynamic_cast<const FlagsMeta*>(tensor.unsafeGetTensorImpl()->get_backend_meta());
  return meta == nullptr ? BackendFlags() : meta->flags();
}

void SerializeBackendFlags(const at::Tensor& tensor,
                           std::unordered_map<std::string, bool>& metadata) {
  for (const auto& [name, value] : ValueOrThrow(GetBackendFlags(tensor))) {
    metadata[absl::StrCat(kSerializedPrefix, name)] = value;
  }
}

void DeserializeBackendFlags(const at::Tensor& tensor,
                             std::unordered_map<std::string, bool>& metadata) {
  BackendFlags flags;
  for (const auto& [key, value] : metadata) {
    if (absl::StartsWith(key, kSerializedPrefix)) {
      flags[key.substr(sizeof(kSerializedPrefix) - 1)] = value;
    }
  }
  if (!flags.empty()) ThrowIfError(SetBackendFlags(tensor, flags));
}

}  // namespace openreg
