#include "core/torch_runtime/runtime_accessor.h"

#include "core/torch_runtime/torch_status.h"

namespace openreg {

Runtime& RuntimeOrThrow() { return *ValueOrThrow(Runtime::Get()); }

Runtime& RuntimeForDevice(int64_t device) {
  Runtime& runtime = RuntimeOrThrow();
  ThrowIfError(runtime.CheckDevice(device));
  return runtime;
}

void CheckDeviceIndex(int64_t device) { RuntimeForDevice(device); }

}  // namespace openreg
