// How PyTorch-facing code reaches the process runtime (core/runtime): the
// runtime started on first use, and device indices checked against it, with
// failures thrown as c10 errors (torch_status.h).
//
// Thread-safety: all functions are thread-safe (Runtime::Get() is); the
// returned Runtime lives for the rest of the process.
#ifndef OPENREG_CORE_TORCH_RUNTIME_RUNTIME_ACCESSOR_H_
#define OPENREG_CORE_TORCH_RUNTIME_RUNTIME_ACCESSOR_H_

#include <cstdint>

#include "core/runtime/runtime.h"

namespace openreg {

// The runtime, initializing it on first use; throws if it cannot start.
Runtime& RuntimeOrThrow();

// The runtime after checking that `device` is a valid index.
Runtime& RuntimeForDevice(int64_t device);

// The execution offset of `device` (Runtime::execution_offset) after
// checking the index: what a host-side alias of its memory for code on the
// driver's threads adds to the device address.
intptr_t ExecutionOffsetOf(int64_t device);

// Throws unless `device` is a valid index (starting the runtime to know the
// device count), for callers that need nothing more from the runtime.
void CheckDeviceIndex(int64_t device);

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_RUNTIME_ACCESSOR_H_
