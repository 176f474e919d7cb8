#include "core/driver/driver_status.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace openreg {

std::string DriverStatusName(openreg_status status) {
  switch (status) {
    case OPENREG_SUCCESS:
      return "SUCCESS";
    case OPENREG_ERROR_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case OPENREG_ERROR_INVALID_DEVICE:
      return "INVALID_DEVICE";
    case OPENREG_ERROR_OUT_OF_MEMORY:
      return "OUT_OF_MEMORY";
    case OPENREG_ERROR_NOT_READY:
      return "NOT_READY";
    case OPENREG_ERROR_NOT_SUPPORTED:
      return "NOT_SUPPORTED";
    case OPENREG_ERROR_LAUNCH_FAILURE:
      return "LAUNCH_FAILURE";
    case OPENREG_ERROR_DEVICE_LOST:
      return "DEVICE_LOST";
    case OPENREG_ERROR_INTERNAL:
      return "INTERNAL";
    case OPENREG_ERROR_NOT_INITIALIZED:
      return "NOT_INITIALIZED";
  }
  return absl::StrCat("UNKNOWN(", status, ")");
}

absl::StatusCode ToAbslStatusCode(openreg_status status) {
  switch (status) {
    case OPENREG_SUCCESS:
      return absl::StatusCode::kOk;
    case OPENREG_ERROR_INVALID_ARGUMENT:
      return absl::StatusCode::kInvalidArgument;
    case OPENREG_ERROR_INVALID_DEVICE:
      return absl::StatusCode::kOutOfRange;
    case OPENREG_ERROR_OUT_OF_MEMORY:
      return absl::StatusCode::kResourceExhausted;
    case OPENREG_ERROR_NOT_READY:
      return absl::StatusCode::kUnavailable;
    case OPENREG_ERROR_NOT_SUPPORTED:
      return absl::StatusCode::kUnimplemented;
    case OPENREG_ERROR_LAUNCH_FAILURE:
      return absl::StatusCode::kAborted;
    case OPENREG_ERROR_DEVICE_LOST:
      return absl::StatusCode::kDataLoss;
    case OPENREG_ERROR_NOT_INITIALIZED:
      return absl::StatusCode::kFailedPrecondition;
    case OPENREG_ERROR_INTERNAL:
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status DriverStatusToAbsl(openreg_status status,
                                absl::string_view driver_name,
                                absl::string_view function,
                                absl::string_view driver_message) {
  if (status == OPENREG_SUCCESS) return absl::OkStatus();
  return absl::Status(
      ToAbslStatusCode(status),
      absl::StrCat("openreg driver '", driver_name, "': ", function,
                   " failed with ", DriverStatusName(status), ": ",
                   driver_message.empty() ? "(the driver gave no message)"
                                          : driver_message));
}

}  // namespace openreg
