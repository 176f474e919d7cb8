// The C++ implementations behind each entry of the openreg_driver_api table,
// one per ABI function with the same signature. They are grouped into
// api_<section>.cc files following the sections of openreg_driver.h;
// threaded_sim_driver.cc wires them into the table.
//
// Thread-safety: every function may be called from any thread, including
// from host functions running on worker threads (except the waits the ABI
// forbids there, which fail instead of deadlocking where the driver can tell).
// Each takes its own reference to the DriverState (see global_state.h), so
// they need no lock of their own. Synchronize functions, event_synchronize and
// copies into pageable host memory block.
#ifndef OPENREG_PLUGINS_THREADED_SIM_API_H_
#define OPENREG_PLUGINS_THREADED_SIM_API_H_

#include <cstddef>
#include <cstdint>

#include "core/driver/openreg_driver.h"

namespace openreg::threaded_sim {

// api_lifecycle.cc
openreg_status Init(const openreg_driver_config* config);
openreg_status Shutdown();
const char* GetLastErrorMessage();

// api_device.cc
openreg_status GetDeviceCount(int32_t* count);
openreg_status GetDeviceProperties(int32_t device,
                                   openreg_device_properties* props);
openreg_status DeviceSynchronize(int32_t device);

// api_memory.cc
openreg_status DeviceMalloc(int32_t device, size_t size, void** ptr);
openreg_status DeviceFree(int32_t device, void* ptr);
openreg_status HostMalloc(size_t size, void** ptr);
openreg_status HostFree(void* ptr);
openreg_status PointerGetAttributes(const void* ptr,
                                    openreg_pointer_attributes* attributes);
openreg_status MemGetInfo(int32_t device, uint64_t* free_bytes,
                          uint64_t* total_bytes);

// api_copy.cc
openreg_status MemcpyAsync(void* dst, const void* src, size_t size,
                           int32_t kind, openreg_stream stream);
openreg_status MemsetAsync(void* ptr, int32_t value, size_t size,
                           openreg_stream stream);

// api_stream.cc
openreg_status StreamCreate(int32_t device, int32_t priority,
                            openreg_stream* stream);
openreg_status StreamDestroy(openreg_stream stream);
openreg_status StreamQuery(openreg_stream stream);
openreg_status StreamSynchronize(openreg_stream stream);
openreg_status StreamWaitEvent(openreg_stream stream, openreg_event event);
openreg_status LaunchHostFunc(openreg_stream stream, openreg_host_fn fn,
                              void* user_data);

// api_event.cc
openreg_status EventCreate(int32_t device, uint32_t flags,
                           openreg_event* event);
openreg_status EventDestroy(openreg_event event);
openreg_status EventRecord(openreg_event event, openreg_stream stream);
openreg_status EventQuery(openreg_event event);
openreg_status EventSynchronize(openreg_event event);
openreg_status EventElapsedTime(openreg_event start, openreg_event end,
                                float* milliseconds);

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_API_H_
