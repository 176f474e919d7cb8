#include "core/torch_runtime/runtime_accessor.h"

#include "core/torch_runtime/torch_status.h"

namespace openreg {

Runtime& RuntimeOrThrow() {
  if (Runtime* started = Runtime::IfStarted()) return *started;
  return *ValueOrThrow(Runtime::Get());
}

Runtime& RuntimeForDevice(int64_t device) {
  Runtime& runtime = RuntimeOrThrow();
  // Every op calls this several times: a valid index builds no Status.
  if (device >= 0 && device < runtime.device_count()) return runtime;
  ThrowIfError(runtime.CheckDevice(device));
  return runtime;
}

intptr_t ExecutionOffsetOf(int64_t device) {
  return RuntimeForDevice(device).execution_offset(
      static_cast<int32_t>(device));
}

void CheckDeviceIndex(int64_t device) { RuntimeForDevice(device); }

}  // namespace openreg
