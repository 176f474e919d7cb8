#include "core/aten/stream_execution.h"

#include <exception>

#include "core/runtime/runtime.h"
#include "core/runtime/torch_status.h"
#include "core/runtime/torch_stream.h"

namespace openreg {
namespace {

struct LaunchedWork {
  absl::FunctionRef<void()> work;
  std::exception_ptr error;
};

// The host function: C on the driver side, so nothing may escape it.
openreg_status RunLaunchedWork(void* user_data) {
  auto* launched = static_cast<LaunchedWork*>(user_data);
  try {
    launched->work();
    return OPENREG_SUCCESS;
  } catch (...) {
    launched->error = std::current_exception();
    return OPENREG_ERROR_LAUNCH_FAILURE;
  }
}

}  // namespace

void RunOnCurrentStreamAndWait(c10::DeviceIndex device,
                               absl::FunctionRef<void()> work) {
  const Driver& driver = RuntimeForDevice(device).driver();
  const openreg_stream stream = CurrentDriverStream(device);
  LaunchedWork launched{work, nullptr};
  absl::Status status = driver.LaunchHostFunc(stream, &RunLaunchedWork, &launched);
  // A synchronous driver reports the failure from the launch itself; an
  // asynchronous one at the synchronize. Either way the work's own exception,
  // if there is one, is the error the user should see.
  if (status.ok()) status = driver.StreamSynchronize(stream);
  if (launched.error) std::rethrow_exception(launched.error);
  ThrowIfError(status);
}

}  // namespace openreg
