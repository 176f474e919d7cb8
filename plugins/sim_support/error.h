// Per-thread error reporting for the simulated drivers.
//
// The ABI promises that after a failing call, last_error_message() on the
// same thread explains the failure. The message lives in a thread_local
// string, so no locking is needed and threads never see each other's errors.
//
// Driver name: last_error_message prefixes the message with the name of the
// driver serving it ("cpu_sim: ..."), which the driver passes to
// LastErrorMessage. Messages are kept per thread, not per context (the ABI
// allows either), so a failed context_create has one too.
//
// Fail() records the error for the calling thread only, so it belongs on the
// thread of the API call that reports the failure: threaded_sim's worker
// threads never call it (a failure of asynchronous work is stored on its
// stream and reported by the API call that finds it).
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_ERROR_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_ERROR_H_

#include <string>

#include "driver_abi/openreg_driver.h"

namespace openreg::sim {

// Records `message` as the calling thread's last error and returns `status`,
// so failure paths read `return Fail(STATUS, ...)`.
openreg_status Fail(openreg_status status, const std::string& message);

// last_error_message: the calling thread's last failure message as
// "<driver_name>: <message>", or "" if none. The pointer stays valid until
// the next call on this thread.
const char* LastErrorMessage(const char* driver_name);

// Symbolic name of a status code, e.g. "OPENREG_ERROR_INVALID_ARGUMENT", for
// messages that mention a status returned by someone else.
const char* StatusName(openreg_status status);

// Fails with INVALID_ARGUMENT when a required pointer argument is NULL.
// `function` and `argument` name the API call and parameter for the message.
openreg_status RequireNonNull(const void* pointer, const char* function,
                              const char* argument);

// Fails with INVALID_ARGUMENT when launch_host_func's `fn` is NULL (a
// function pointer, which RequireNonNull cannot take).
openreg_status RequireHostFunction(openreg_host_fn fn, const char* function);

}  // namespace openreg::sim

// Returns the status of `expr` from the calling function unless it is
// OPENREG_SUCCESS: the early return every entry point's checks share.
#define SIM_RETURN_IF_ERROR(expr)                                \
  do {                                                           \
    if (const openreg_status sim_status_ = (expr);               \
        sim_status_ != OPENREG_SUCCESS) {                        \
      return sim_status_;                                        \
    }                                                            \
  } while (false)

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_ERROR_H_
