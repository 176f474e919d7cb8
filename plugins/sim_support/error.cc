#include "plugins/sim_support/error.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace openreg::sim {
namespace {

struct ThreadError {
  std::string message;
  // "<driver>: <message>", built by the first LastErrorMessage after a
  // failure rather than by every Fail.
  std::string prefixed;
  bool prefixed_current = true;
};

ThreadError& ThreadLastError() {
  thread_local ThreadError error;
  return error;
}

}  // namespace

openreg_status Fail(openreg_status status, const std::string& message) {
  ThreadError& error = ThreadLastError();
  error.message = message;
  error.prefixed_current = false;
  return status;
}

const char* LastErrorMessage(const char* driver_name) {
  ThreadError& error = ThreadLastError();
  if (!error.prefixed_current) {
    error.prefixed = absl::StrCat(driver_name, ": ", error.message);
    error.prefixed_current = true;
  }
  return error.prefixed.c_str();
}

const char* StatusName(openreg_status status) {
  switch (status) {
    case OPENREG_SUCCESS:
      return "OPENREG_SUCCESS";
    case OPENREG_ERROR_INVALID_ARGUMENT:
      return "OPENREG_ERROR_INVALID_ARGUMENT";
    case OPENREG_ERROR_INVALID_DEVICE:
      return "OPENREG_ERROR_INVALID_DEVICE";
    case OPENREG_ERROR_OUT_OF_MEMORY:
      return "OPENREG_ERROR_OUT_OF_MEMORY";
    case OPENREG_ERROR_NOT_READY:
      return "OPENREG_ERROR_NOT_READY";
    case OPENREG_ERROR_NOT_SUPPORTED:
      return "OPENREG_ERROR_NOT_SUPPORTED";
    case OPENREG_ERROR_LAUNCH_FAILURE:
      return "OPENREG_ERROR_LAUNCH_FAILURE";
    case OPENREG_ERROR_DEVICE_LOST:
      return "OPENREG_ERROR_DEVICE_LOST";
    case OPENREG_ERROR_INTERNAL:
      return "OPENREG_ERROR_INTERNAL";
    case OPENREG_ERROR_NOT_INITIALIZED:
      return "OPENREG_ERROR_NOT_INITIALIZED";
  }
  return "unknown openreg_status";
}

openreg_status RequireNonNull(const void* pointer, const char* function,
                              const char* argument) {
  if (pointer != nullptr) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("%s: argument '%s' is NULL; pass a valid "
                              "pointer",
                              function, argument));
}

openreg_status RequireHostFunction(openreg_host_fn fn, const char* function) {
  if (fn != nullptr) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("%s: argument 'fn' is NULL; pass the host "
                              "function to run",
                              function));
}

}  // namespace openreg::sim
