// The function table and entry point of a simulated driver, written once for
// cpu_sim and threaded_sim.
//
// Every function is named by its ABI name, so the table is generated from the
// ABI's one function list, OPENREG_DRIVER_FUNCTIONS, with designated
// initializers: `.stream_query = stream_query`, resolved in the driver's
// namespace. An entry can therefore never be swapped with another of the same
// signature, and a missing function does not compile. The functions both
// drivers implement the same way (device count and properties, memory) come
// from shared_api.h through using-declarations; each driver implements the
// others in its own namespace: its api.h expands SIM_DECLARE_DRIVER_FUNCTIONS()
// there, and its api_<section>.cc files define them. Its <name>_driver.cc
// expands SIM_DEFINE_DRIVER once, which defines last_error_message, the static
// table and the one exported symbol, OPENREG_DRIVER_ENTRY_SYMBOL. The driver
// names itself with `kDriverName` (a constexpr char array) in its namespace.
//
// Macros, because only a macro can open the namespace passed as an argument
// and expand the ABI's X-macro inside it.
//
// Both drivers implement ABI 2.2 exactly: the table reports major 2, minor 2
// and OPENREG_DRIVER_API_STRUCT_SIZE_V2_2. When a later minor version appends
// functions, the X-macro makes every simulated driver implement them (or fail
// to compile), and the version fields here move with them.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_DRIVER_TABLE_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_DRIVER_TABLE_H_

#include <cstddef>
#include <cstdint>

#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/error.h"  // LastErrorMessage, used by the macro
#include "plugins/sim_support/shared_api.h"

namespace openreg::sim {

// The body of the entry point: stores `table` in *api, or fails with
// INVALID_ARGUMENT for a NULL `api`. The table is handed out whatever version
// the core speaks: compatibility is the core's decision (it reads the table's
// version fields), so that its error can name both versions.
openreg_status HandOutDriverApi(const openreg_driver_api* table,
                                const openreg_driver_api** api);

}  // namespace openreg::sim

// Declares, in the enclosing (driver) namespace, the function behind every
// table entry: shared_api.h's by using-declarations, the driver's own ones
// (defined in its api_<section>.cc files, last_error_message by
// SIM_DEFINE_DRIVER).
#define SIM_DECLARE_DRIVER_FUNCTIONS()                                         \
  using ::openreg::sim::get_device_count;                                      \
  using ::openreg::sim::get_device_properties;                                 \
  using ::openreg::sim::device_malloc;                                         \
  using ::openreg::sim::device_free;                                           \
  using ::openreg::sim::host_malloc;                                           \
  using ::openreg::sim::host_free;                                             \
  using ::openreg::sim::pointer_get_attributes;                                \
  using ::openreg::sim::mem_get_info;                                          \
  using ::openreg::sim::device_execution_offset;                               \
  using ::openreg::sim::activity_enable;                                       \
  using ::openreg::sim::activity_set_correlation_id;                           \
  using ::openreg::sim::activity_get_timestamp;                                \
  /* api_lifecycle.cc */                                                       \
  openreg_status context_create(const openreg_driver_config* config,           \
                                openreg_context* context);                     \
  openreg_status context_destroy(openreg_context context);                     \
  const char* last_error_message(openreg_context context);                     \
  /* api_device.cc */                                                          \
  openreg_status device_synchronize(openreg_context context, int32_t device);  \
  /* api_copy.cc */                                                            \
  openreg_status memcpy_async(openreg_context context, void* dst,              \
                              const void* src, size_t size, int32_t kind,      \
                              openreg_stream stream);                          \
  openreg_status memset_async(openreg_context context, void* ptr,              \
                              int32_t value, size_t size,                      \
                              openreg_stream stream);                          \
  /* api_stream.cc */                                                          \
  openreg_status stream_create(openreg_context context, int32_t device,        \
                               int32_t priority, openreg_stream* stream);      \
  openreg_status stream_destroy(openreg_context context,                       \
                                openreg_stream stream);                        \
  openreg_status stream_query(openreg_context context, openreg_stream stream); \
  openreg_status stream_synchronize(openreg_context context,                   \
                                    openreg_stream stream);                    \
  openreg_status stream_wait_event(                                            \
      openreg_context context, openreg_stream stream, openreg_event event);    \
  openreg_status stream_get_priority(                                          \
      openreg_context context, openreg_stream stream, int32_t* priority);      \
  openreg_status launch_host_func(openreg_context context,                     \
                                  openreg_stream stream, openreg_host_fn fn,   \
                                  void* user_data);                            \
  /* api_event.cc */                                                           \
  openreg_status event_create(openreg_context context, int32_t device,         \
                              uint32_t flags, openreg_event* event);           \
  openreg_status event_destroy(openreg_context context, openreg_event event);  \
  openreg_status event_record(openreg_context context, openreg_event event,    \
                              openreg_stream stream);                          \
  openreg_status event_query(openreg_context context, openreg_event event);    \
  openreg_status event_synchronize(openreg_context context,                    \
                                   openreg_event event);                       \
  openreg_status event_elapsed_time(openreg_context context,                   \
                                    openreg_event start, openreg_event end,    \
                                    float* milliseconds)

// One designated initializer per OPENREG_DRIVER_FUNCTIONS entry, naming the
// function of the same name in the enclosing namespace.
#define SIM_TABLE_ENTRY(minor, return_type, name, params) .name = name,

// Defines, at global scope, the table of the driver whose functions and
// kDriverName live in namespace `ns`, of version `version_literal`.
#define SIM_DEFINE_DRIVER(ns, version_literal)                        \
  namespace ns {                                                      \
  /* Messages are per thread (error.h); the context is not needed. */ \
  const char* last_error_message(openreg_context /*context*/) {       \
    return ::openreg::sim::LastErrorMessage(kDriverName);             \
  }                                                                   \
  namespace {                                                         \
  constexpr openreg_driver_api kDriverApi = {                         \
      .struct_size = OPENREG_DRIVER_API_STRUCT_SIZE_V2_2,             \
      .abi_version_major = OPENREG_DRIVER_ABI_VERSION_MAJOR,          \
      .abi_version_minor = 2,                                         \
      .driver_name = kDriverName,                                     \
      .driver_version = version_literal,                              \
      OPENREG_DRIVER_FUNCTIONS(SIM_TABLE_ENTRY)};                     \
  }                                                                   \
  }                                                                   \
  extern "C" __attribute__((visibility("default"))) openreg_status    \
  OPENREG_DRIVER_ENTRY_SYMBOL(uint32_t core_abi_major,                \
                              uint32_t core_abi_minor,                \
                              const openreg_driver_api** api) {       \
    static_cast<void>(core_abi_major);                                \
    static_cast<void>(core_abi_minor);                                \
    return ::openreg::sim::HandOutDriverApi(&ns::kDriverApi, api);    \
  }

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_DRIVER_TABLE_H_
