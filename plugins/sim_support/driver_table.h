// The function table and entry point of a simulated driver, written once for
// cpu_sim and threaded_sim.
//
// The functions both drivers implement the same way (device count and
// properties, memory) come from shared_api.h. Each driver implements the
// others as C++ functions of the ABI's signatures in its own namespace: its
// api.h expands SIM_DECLARE_DRIVER_FUNCTIONS() there, and its
// api_<section>.cc files define them. Its <name>_driver.cc expands
// SIM_DEFINE_DRIVER once, which defines sim::DriverName() (error.h), the
// static table of those functions and the one exported symbol,
// OPENREG_DRIVER_ENTRY_SYMBOL.
//
// Macros, because only a macro can name the functions of a namespace passed
// as an argument; without them the table and the declarations would be
// written out in each driver.
//
// Both drivers implement ABI 1.1 exactly: the table reports minor version 1
// and OPENREG_DRIVER_API_STRUCT_SIZE_V1_1. A later minor version appends
// entries that a driver must opt into here, together with its declarations.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_DRIVER_TABLE_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_DRIVER_TABLE_H_

#include <cstddef>
#include <cstdint>

#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/error.h"  // DriverName(), which the macro defines
#include "plugins/sim_support/shared_api.h"

namespace openreg::sim {

// The body of the entry point: stores `table` in *api, or fails with
// INVALID_ARGUMENT for a NULL `api`. The table is handed out whatever version
// the core speaks: compatibility is the core's decision (it reads the table's
// version fields), so that its error can name both versions.
openreg_status HandOutDriverApi(const openreg_driver_api* table,
                                const openreg_driver_api** api);

}  // namespace openreg::sim

// Declares, in the enclosing namespace, the driver's own function behind each
// table entry that shared_api.h does not provide.
#define SIM_DECLARE_DRIVER_FUNCTIONS()                                        \
  /* api_lifecycle.cc */                                                      \
  openreg_status Init(const openreg_driver_config* config);                   \
  openreg_status Shutdown();                                                  \
  /* api_device.cc */                                                         \
  openreg_status DeviceSynchronize(int32_t device);                           \
  /* api_copy.cc */                                                           \
  openreg_status MemcpyAsync(void* dst, const void* src, size_t size,         \
                             int32_t kind, openreg_stream stream);            \
  openreg_status MemsetAsync(void* ptr, int32_t value, size_t size,           \
                             openreg_stream stream);                          \
  /* api_stream.cc */                                                         \
  openreg_status StreamCreate(int32_t device, int32_t priority,               \
                              openreg_stream* stream);                        \
  openreg_status StreamDestroy(openreg_stream stream);                        \
  openreg_status StreamQuery(openreg_stream stream);                          \
  openreg_status StreamSynchronize(openreg_stream stream);                    \
  openreg_status StreamWaitEvent(openreg_stream stream, openreg_event event); \
  openreg_status StreamGetPriority(openreg_stream stream, int32_t* priority); \
  openreg_status LaunchHostFunc(openreg_stream stream, openreg_host_fn fn,    \
                                void* user_data);                             \
  /* api_event.cc */                                                          \
  openreg_status EventCreate(int32_t device, uint32_t flags,                  \
                             openreg_event* event);                           \
  openreg_status EventDestroy(openreg_event event);                           \
  openreg_status EventRecord(openreg_event event, openreg_stream stream);     \
  openreg_status EventQuery(openreg_event event);                             \
  openreg_status EventSynchronize(openreg_event event);                       \
  openreg_status EventElapsedTime(openreg_event start, openreg_event end,     \
                                  float* milliseconds)

// Defines, at global scope, the driver `name` (a string literal) of version
// `version` whose functions live in namespace `ns`.
#define SIM_DEFINE_DRIVER(ns, name, version)                                 \
  const char* openreg::sim::DriverName() { return name; }                    \
  extern "C" __attribute__((visibility("default"))) openreg_status           \
  OPENREG_DRIVER_ENTRY_SYMBOL(uint32_t core_abi_major,                       \
                              uint32_t core_abi_minor,                       \
                              const openreg_driver_api** api) {              \
    static_cast<void>(core_abi_major);                                       \
    static_cast<void>(core_abi_minor);                                       \
    static constexpr openreg_driver_api kTable = {                           \
        /*struct_size=*/OPENREG_DRIVER_API_STRUCT_SIZE_V1_1,                 \
        /*abi_version_major=*/OPENREG_DRIVER_ABI_VERSION_MAJOR,              \
        /*abi_version_minor=*/1,                                             \
        /*driver_name=*/name,                                                \
        /*driver_version=*/version,                                          \
        /*init=*/ns::Init,                                                   \
        /*shutdown=*/ns::Shutdown,                                           \
        /*last_error_message=*/::openreg::sim::LastErrorMessage,              \
        /*get_device_count=*/::openreg::sim::GetDeviceCount,                 \
        /*get_device_properties=*/::openreg::sim::GetDeviceProperties,       \
        /*device_malloc=*/::openreg::sim::DeviceMalloc,                      \
        /*device_free=*/::openreg::sim::DeviceFree,                          \
        /*host_malloc=*/::openreg::sim::HostMalloc,                          \
        /*host_free=*/::openreg::sim::HostFree,                              \
        /*pointer_get_attributes=*/::openreg::sim::PointerGetAttributes,     \
        /*mem_get_info=*/::openreg::sim::MemGetInfo,                         \
        /*memcpy_async=*/ns::MemcpyAsync,                                    \
        /*memset_async=*/ns::MemsetAsync,                                    \
        /*stream_create=*/ns::StreamCreate,                                  \
        /*stream_destroy=*/ns::StreamDestroy,                                \
        /*stream_query=*/ns::StreamQuery,                                    \
        /*stream_synchronize=*/ns::StreamSynchronize,                        \
        /*stream_wait_event=*/ns::StreamWaitEvent,                           \
        /*event_create=*/ns::EventCreate,                                    \
        /*event_destroy=*/ns::EventDestroy,                                  \
        /*event_record=*/ns::EventRecord,                                    \
        /*event_query=*/ns::EventQuery,                                      \
        /*event_synchronize=*/ns::EventSynchronize,                          \
        /*event_elapsed_time=*/ns::EventElapsedTime,                         \
        /*launch_host_func=*/ns::LaunchHostFunc,                             \
        /*device_synchronize=*/ns::DeviceSynchronize,                        \
        /*stream_get_priority=*/ns::StreamGetPriority,                       \
    };                                                                       \
    return ::openreg::sim::HandOutDriverApi(&kTable, api);                   \
  }

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_DRIVER_TABLE_H_
