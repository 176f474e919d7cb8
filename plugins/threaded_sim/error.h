// Per-thread error reporting for the threaded_sim driver.
//
// The ABI promises that after a failing call, last_error_message() on the
// same thread explains the failure. The message lives in a thread_local
// string, so no locking is needed and threads never see each other's errors.
// Worker threads never call Fail(): a failure of asynchronous work is stored
// on its stream (see stream.h) and reported by the API call that finds it.
#ifndef OPENREG_PLUGINS_THREADED_SIM_ERROR_H_
#define OPENREG_PLUGINS_THREADED_SIM_ERROR_H_

#include <string>

#include "core/driver/openreg_driver.h"

namespace openreg::threaded_sim {

// Records "threaded_sim: <message>" as the calling thread's last error and
// returns `status`, so failure paths read `return Fail(STATUS, ...)`.
openreg_status Fail(openreg_status status, const std::string& message);

// The calling thread's last failure message, or "" if none. The pointer stays
// valid until the next failure on this thread.
const char* LastErrorMessage();

// Symbolic name of a status code, e.g. "OPENREG_ERROR_INVALID_ARGUMENT", for
// messages that mention a status returned by someone else.
const char* StatusName(openreg_status status);

// Fails with INVALID_ARGUMENT when a required pointer argument is NULL.
// `function` and `argument` name the API call and parameter for the message.
openreg_status RequireNonNull(const void* pointer, const char* function,
                              const char* argument);

}  // namespace openreg::threaded_sim

// Returns the status of `expr` from the calling function unless it is
// OPENREG_SUCCESS: the early return every entry point's checks share.
#define THREADED_SIM_RETURN_IF_ERROR(expr)                       \
  do {                                                           \
    if (const openreg_status threaded_sim_status_ = (expr);      \
        threaded_sim_status_ != OPENREG_SUCCESS) {               \
      return threaded_sim_status_;                               \
    }                                                            \
  } while (false)

#endif  // OPENREG_PLUGINS_THREADED_SIM_ERROR_H_
