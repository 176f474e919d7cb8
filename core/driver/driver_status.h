// Conversion of driver status codes into absl::Status.
//
// The core speaks absl::Status internally; this is the one place a raw
// openreg_status from a driver becomes one. The mapping keeps the failures the
// core must react to distinguishable by code: out of memory is
// kResourceExhausted, a failed launch kAborted, a bad device index kOutOfRange.
#ifndef OPENREG_CORE_DRIVER_DRIVER_STATUS_H_
#define OPENREG_CORE_DRIVER_DRIVER_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

// "OUT_OF_MEMORY" for OPENREG_ERROR_OUT_OF_MEMORY, "UNKNOWN(42)" for codes
// this core does not know.
std::string DriverStatusName(openreg_status status);

absl::StatusCode ToAbslStatusCode(openreg_status status);

// An OK status for OPENREG_SUCCESS; otherwise an error whose message names the
// driver, the function that failed, the status and the driver's message.
absl::Status DriverStatusToAbsl(openreg_status status,
                                absl::string_view driver_name,
                                absl::string_view function,
                                absl::string_view driver_message);

}  // namespace openreg

#endif  // OPENREG_CORE_DRIVER_DRIVER_STATUS_H_
