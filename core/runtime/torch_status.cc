#include "core/runtime/torch_status.h"

#include <c10/util/Exception.h>

#include <string>

#include "core/runtime/runtime.h"

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

Runtime& RuntimeOrThrow() { return *ValueOrThrow(Runtime::Get()); }

Runtime& RuntimeForDevice(int64_t device) {
  Runtime& runtime = RuntimeOrThrow();
  ThrowIfError(runtime.CheckDevice(device));
  return runtime;
}

}  // namespace openreg
