// The argument checks of memcpy_async and memset_async, the same in both
// simulated drivers; how each then runs the copy is its own.
//
// Thread-safety: pure functions of the state, which locks its own memory.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_COPY_CHECKS_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_COPY_CHECKS_H_

#include <cstddef>
#include <cstdint>

#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/sim_state.h"

namespace openreg::sim {

// Which sides of a copy of a valid `kind` are device memory.
inline bool CopyReadsDevice(int32_t kind) {
  return kind == OPENREG_MEMCPY_DEVICE_TO_HOST ||
         kind == OPENREG_MEMCPY_DEVICE_TO_DEVICE;
}
inline bool CopyWritesDevice(int32_t kind) {
  return kind == OPENREG_MEMCPY_HOST_TO_DEVICE ||
         kind == OPENREG_MEMCPY_DEVICE_TO_DEVICE;
}

// memcpy_async on a stream already found live: INVALID_ARGUMENT for a `kind`
// that is not a copy direction, and, when `size` is not 0, for a NULL
// pointer or a device side outside one live device allocation. Stores in
// *description what the copy is called in failure messages, e.g.
// "memcpy_async (OPENREG_MEMCPY_HOST_TO_DEVICE)" (a static string).
openreg_status CheckCopy(const SimState& state, void* dst, const void* src,
                         size_t size, int32_t kind, const char** description);

// INVALID_ARGUMENT unless [ptr, ptr + size) lies inside a single live device
// allocation, naming the allocation's bounds when it does not. `role` ("dst",
// "src", "ptr") and `purpose` say in the message which argument of `function`
// is wrong and why it must be device memory.
openreg_status CheckDeviceRange(const SimState& state, const void* ptr,
                                size_t size, const char* function,
                                const char* role, const char* purpose);

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_COPY_CHECKS_H_
