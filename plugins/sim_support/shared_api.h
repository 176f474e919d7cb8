// The ABI functions that both simulated drivers implement identically:
// device count and properties, every memory function (with 2.1's
// device_execution_offset) and 2.2's activity recording. Named by their ABI
// names, so a driver's api.h brings them into its namespace with
// using-declarations and driver_table.h fills their table entries by name.
// Each works on the SimState of the context it is passed (context_registry.h).
//
// Thread-safety: every function may be called from any thread, concurrently,
// including from host functions; each uses the state FindState returns, which
// outlives the call (context_registry.h).
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_SHARED_API_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_SHARED_API_H_

#include <cstddef>
#include <cstdint>

#include "driver_abi/openreg_driver.h"

namespace openreg::sim {

openreg_status get_device_count(openreg_context context, int32_t* count);
// The name is "openreg <driver> device"; the priority range and
// concurrent_streams come from the SimState.
openreg_status get_device_properties(openreg_context context, int32_t device,
                                     openreg_device_properties* props);

openreg_status device_malloc(openreg_context context, int32_t device,
                             size_t size, void** ptr);
openreg_status device_free(openreg_context context, int32_t device, void* ptr);
openreg_status host_malloc(openreg_context context, size_t size, void** ptr);
openreg_status host_free(openreg_context context, void* ptr);
openreg_status pointer_get_attributes(openreg_context context, const void* ptr,
                                      openreg_pointer_attributes* attributes);
openreg_status mem_get_info(openreg_context context, int32_t device,
                            uint64_t* free_bytes, uint64_t* total_bytes);
// The device's DeviceMemory::execution_offset() (ABI 2.1).
openreg_status device_execution_offset(openreg_context context, int32_t device,
                                       intptr_t* offset);
// Activity recording (ABI 2.2), through the SimState's ActivityRecorder.
openreg_status activity_enable(openreg_context context, openreg_activity_fn fn,
                               void* user_data);
openreg_status activity_set_correlation_id(openreg_context context,
                                           uint64_t correlation_id);
openreg_status activity_get_timestamp(openreg_context context,
                                      uint64_t* timestamp_ns);

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_SHARED_API_H_
