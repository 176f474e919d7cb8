// The ABI functions that both simulated drivers implement identically:
// device count and properties, and every memory function. They reach the
// driver's state through AcquireSimState (sim_state.h); driver_table.h puts
// them into each driver's table, next to the driver's own functions.
//
// Thread-safety: every function may be called from any thread, concurrently,
// including from host functions; each takes its own reference to the state.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_SHARED_API_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_SHARED_API_H_

#include <cstddef>
#include <cstdint>

#include "driver_abi/openreg_driver.h"

namespace openreg::sim {

openreg_status GetDeviceCount(int32_t* count);
// The name is "openreg <driver> device"; the priority range and
// concurrent_streams come from the SimState.
openreg_status GetDeviceProperties(int32_t device,
                                   openreg_device_properties* props);

openreg_status DeviceMalloc(int32_t device, size_t size, void** ptr);
openreg_status DeviceFree(int32_t device, void* ptr);
openreg_status HostMalloc(size_t size, void** ptr);
openreg_status HostFree(void* ptr);
openreg_status PointerGetAttributes(const void* ptr,
                                    openreg_pointer_attributes* attributes);
openreg_status MemGetInfo(int32_t device, uint64_t* free_bytes,
                          uint64_t* total_bytes);

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_SHARED_API_H_
