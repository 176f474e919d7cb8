// The driver validation layer (OPENREG_DRIVER_VALIDATION=1): wraps one
// context of a driver in a context of its own, with a full ABI 2.0 table that
// checks the arguments and handle lifetimes of every call and forwards only
// correct calls to the driver.
//
// It catches misuse that a driver may not notice, or notices only by
// crashing: a destroyed or made-up stream or event, an event recorded on a
// stream of another device, freeing a pointer that is not an allocation (or
// on the wrong device, or twice), copies that overrun their allocation or use
// the wrong memory kind, timing a non-timing or unrecorded event, NULL
// out-pointers, device indices out of range and calls with a NULL, destroyed
// or unknown context. It also catches a driver that reports success without
// returning a handle.
//
// A misuse is not forwarded. The call returns the status the ABI prescribes
// for it (INVALID_ARGUMENT or INVALID_DEVICE; INTERNAL for a driver bug) and
// last_error_message() returns
//   "openreg driver validation: <call with its arguments>: <what is wrong>"
// so the process keeps working and the core's normal error path names the
// call. The first misuse is also kept (first_misuse()) and printed once to
// stderr, because some callers cannot report an error (destructors).
//
// Several layers, over one driver or several, coexist: each call finds its
// layer through the context it is given, in a process-wide registry of the
// live layers keyed by their contexts. The registry exists because a C call
// carries nothing but the context, and the layer must tell a live context
// from a destroyed or made-up one before touching it; it records what
// exists, never a "current" layer. It is created once and never destroyed
// (a Driver may die during exit), and guarded by its own mutex, which is held
// only to look up, add or remove a layer, never while the driver runs. The layer's table cannot create a
// context (it would not know which driver to wrap): its context_create fails
// with NOT_SUPPORTED; use Wrap.
//
// Ownership: the layer owns the wrapped context from Wrap on. Its own
// context_destroy destroys the wrapped one; a layer destroyed while its
// context lives destroys it then. The driver's table must outlive the layer.
//
// Thread-safety: the table may be called from any thread, as the driver's
// may; the layer holds no lock while the driver runs, so host functions may
// call back into it.
#ifndef OPENREG_CORE_DRIVER_VALIDATION_LAYER_H_
#define OPENREG_CORE_DRIVER_VALIDATION_LAYER_H_

#include <atomic>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/driver/validation_tracker.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

class ValidationLayer {
 public:
  // Wraps `driver_context`, a live context of `driver` (a complete 2.0
  // table, such as DriverLibrary::api()). Fails, destroying nothing, when
  // the context is NULL or its device count cannot be read.
  static absl::StatusOr<std::unique_ptr<ValidationLayer>> Wrap(
      const openreg_driver_api& driver, openreg_context driver_context);

  ~ValidationLayer();
  ValidationLayer(const ValidationLayer&) = delete;
  ValidationLayer& operator=(const ValidationLayer&) = delete;

  // The validating table, with the driver's name and version. Valid for the
  // life of the layer.
  const openreg_driver_api& api() const { return table_; }
  // The layer's own context, to pass to api()'s functions; invalid once
  // api().context_destroy was called with it.
  openreg_context context() const;

  // The message of the first misuse, or "" when there was none.
  std::string first_misuse() const;

 private:
  friend struct ValidationCalls;

  ValidationLayer(const openreg_driver_api& driver,
                  openreg_context driver_context, int32_t device_count);

  // Reports `problem`, found in `call`, as the calling thread's error.
  openreg_status Reject(const std::string& call, const absl::Status& problem);
  // Passes the driver's status on; its message is the driver's own.
  openreg_status Forward(openreg_status status);

  const openreg_driver_api& driver_;
  const openreg_context driver_context_;
  // False once the wrapped context was destroyed.
  std::atomic<bool> driver_context_live_{true};
  const openreg_driver_api table_;
  ValidationTracker tracker_;

  mutable absl::Mutex first_misuse_mutex_;
  std::string first_misuse_ ABSL_GUARDED_BY(first_misuse_mutex_);
};

}  // namespace openreg

#endif  // OPENREG_CORE_DRIVER_VALIDATION_LAYER_H_
