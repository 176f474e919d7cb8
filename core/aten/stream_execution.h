// Running work on a device's stream.
//
// All compute on openreg memory goes through here: the work becomes a host
// function launched on the calling thread's current stream of `device`, so it
// runs in stream order after everything enqueued before it.
//
// This version waits for the work before returning, which is what a
// synchronous driver does anyway; an exception thrown by the work is rethrown
// on the calling thread with its original type.
#ifndef OPENREG_CORE_ATEN_STREAM_EXECUTION_H_
#define OPENREG_CORE_ATEN_STREAM_EXECUTION_H_

#include <c10/core/Device.h>

#include "absl/functional/function_ref.h"

namespace openreg {

void RunOnCurrentStreamAndWait(c10::DeviceIndex device,
                               absl::FunctionRef<void()> work);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_STREAM_EXECUTION_H_
