#include "core/torch_runtime/runtime_accessor.h"

#include "core/torch_runtime/torch_status.h"

namespace openreg {

Runtime& RuntimeOrThrow() { return *ValueOrThrow(Runtime::Get()); }

Runtime& RuntimeForDevice(int64_t device) {
  Runtime& runtime = RuntimeOrThrow();
  ThrowIfError(runtime.CheckDevice(device));
  return runtime;
}

intptr_t ExecutionOffsetOf(int64_t device) {
  return RuntimeForDevice(device).execution_offset(
      static_cast<int32_t>(device));
}

void CheckDeviceIndex(int64_t device) { RuntimeForDevice(device); }

}  // namespace openreg
