#include "core/torch_runtime/torch_status.h"

#include <c10/util/Exception.h>

#include <string>

namespace openreg {

void ThrowStatus(const absl::Status& status) {
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kResourceExhausted:
      TORCH_CHECK_WITH(OutOfMemoryError, false, message);
    case absl::StatusCode::kInvalidArgument:
      TORCH_CHECK_VALUE(false, message);
    case absl::StatusCode::kUnimplemented:
      TORCH_CHECK_NOT_IMPLEMENTED(false, message);
    default:
      TORCH_CHECK(false, message);
  }
}

}  // namespace openreg
