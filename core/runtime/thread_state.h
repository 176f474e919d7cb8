// Per-thread device state: the current device and each device's current
// stream, as in CUDA. Thread-local, so no locking; a new thread starts on
// device 0 with every device's default stream current.
//
// Note [Thread-locals on the launch path]
// The core is loaded with dlopen, so each access to one of its thread_local
// variables is a call to __tls_get_addr (the general-dynamic TLS model), and
// GCC recomputes a thread-local's address after every call the function makes
// rather than keeping it in a register. A function of the per-op path that
// touches a thread_local several times around other calls therefore reaches
// it through an accessor marked ABSL_ATTRIBUTE_NOINLINE: one call, whose
// result the compiler has to keep. Per-op state of one concern lives in one
// thread_local struct for the same reason.
#ifndef OPENREG_CORE_RUNTIME_THREAD_STATE_H_
#define OPENREG_CORE_RUNTIME_THREAD_STATE_H_

#include <cstdint>

namespace openreg {

int32_t CurrentDeviceIndex();
// The caller validates `device`.
void SetCurrentDeviceIndex(int32_t device);

int64_t CurrentStreamId(int32_t device);
// The caller validates `device` (below kMaxDeviceCount, runtime_config.h).
void SetCurrentStreamId(int32_t device, int64_t stream_id);

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_THREAD_STATE_H_
