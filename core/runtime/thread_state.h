// Per-thread device state: the current device and each device's current
// stream, as in CUDA. Thread-local, so no locking; a new thread starts on
// device 0 with every device's default stream current.
#ifndef OPENREG_CORE_RUNTIME_THREAD_STATE_H_
#define OPENREG_CORE_RUNTIME_THREAD_STATE_H_

#include <cstdint>

namespace openreg {

int32_t CurrentDeviceIndex();
// The caller validates `device`.
void SetCurrentDeviceIndex(int32_t device);

int64_t CurrentStreamId(int32_t device);
void SetCurrentStreamId(int32_t device, int64_t stream_id);

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_THREAD_STATE_H_
