// The PyTorch boundary for errors: absl::Status becomes a c10::Error (and so
// a Python exception) here and nowhere else.
//
//   kResourceExhausted -> c10::OutOfMemoryError (torch.OutOfMemoryError)
//   kInvalidArgument   -> c10::ValueError       (ValueError)
//   kUnimplemented     -> c10::NotImplementedError (NotImplementedError, a
//                         RuntimeError): a feature the driver lacks
//   anything else      -> c10::Error            (RuntimeError)
#ifndef OPENREG_CORE_TORCH_RUNTIME_TORCH_STATUS_H_
#define OPENREG_CORE_TORCH_RUNTIME_TORCH_STATUS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace openreg {

[[noreturn]] void ThrowStatus(const absl::Status& status);

inline void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) ThrowStatus(status);
}

template <typename T>
T ValueOrThrow(absl::StatusOr<T> value) {
  if (!value.ok()) ThrowStatus(value.status());
  return *std::move(value);
}

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_TORCH_STATUS_H_
