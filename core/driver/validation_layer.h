// The driver validation layer (OPENREG_DRIVER_VALIDATION=1): a function table
// with the driver ABI's own signatures that sits between the core and a
// driver, checks the arguments and handle lifetimes of every call, and
// forwards only correct calls to the driver.
//
// It catches misuse that a driver may not notice, or notices only by
// crashing: a destroyed or made-up stream or event, an event recorded on a
// stream of another device, freeing a pointer that is not an allocation (or
// on the wrong device, or twice), copies that overrun their allocation or use
// the wrong memory kind, timing a non-timing or unrecorded event, NULL
// out-pointers, device indices out of range and calls outside init/shutdown.
// The optional functions of ABI 1.1 (stream_get_priority) are checked too.
// It also catches a driver that reports success without returning a handle.
//
// A misuse is not forwarded. The call returns the status the ABI prescribes
// for it (INVALID_ARGUMENT, INVALID_DEVICE or NOT_INITIALIZED; INTERNAL for a
// driver bug) and last_error_message() returns
//   "openreg driver validation: <call with its arguments>: <what is wrong>"
// so the process keeps working and the core's normal error path names the
// call. The first misuse is also kept (first_misuse()) and printed once to
// stderr, because some callers cannot report an error (destructors).
//
// One layer at a time: the C table carries no context pointer, so its
// functions reach the active layer through a process-wide pointer; Create
// fails while another layer exists. The core loads one driver per process.
//
// Thread-safety: the table may be called from any thread, as the driver's
// may; the layer holds no lock while the driver runs, so host functions may
// call back into it.
#ifndef OPENREG_CORE_DRIVER_VALIDATION_LAYER_H_
#define OPENREG_CORE_DRIVER_VALIDATION_LAYER_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "driver_abi/openreg_driver.h"
#include "core/driver/validation_tracker.h"

namespace openreg {

class ValidationLayer {
 public:
  // Wraps `driver`, a table that passed ValidateDriverApi and stays valid
  // for the life of the layer. The driver must not be initialized yet.
  static absl::StatusOr<std::unique_ptr<ValidationLayer>> Create(
      const openreg_driver_api* driver);

  ~ValidationLayer();
  ValidationLayer(const ValidationLayer&) = delete;
  ValidationLayer& operator=(const ValidationLayer&) = delete;

  // The validating table, with the driver's name and version: a 1.1 table
  // when the driver's is (its optional entries set where the driver's are),
  // else a 1.0 table.
  const openreg_driver_api* api() const { return &table_; }

  // The message of the first misuse, or "" when there was none.
  std::string first_misuse() const;

 private:
  friend struct ValidationCalls;

  explicit ValidationLayer(const openreg_driver_api* driver);

  // Reports `problem`, found in `call`, as the calling thread's error.
  openreg_status Reject(const std::string& call, const absl::Status& problem);
  // Passes the driver's status on; its message is the driver's own.
  openreg_status Forward(openreg_status status);

  const openreg_driver_api& driver_;
  openreg_driver_api table_;
  ValidationTracker tracker_;

  mutable absl::Mutex first_misuse_mutex_;
  std::string first_misuse_ ABSL_GUARDED_BY(first_misuse_mutex_);
};

}  // namespace openreg

#endif  // OPENREG_CORE_DRIVER_VALIDATION_LAYER_H_
