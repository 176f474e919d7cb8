/*
 * openreg driver ABI, major version 1 (1.0 and 1.1), frozen.
 *
 * Major 1 had no context: a driver held one process-wide instance between
 * `init` and `shutdown`. New drivers implement openreg_driver.h (2.0). This
 * header stays so that drivers written for 1.x keep building, and so that the
 * core's loader can adapt their tables behind a 2.0 context
 * (core/driver/v1_adapter.h); it never changes again.
 *
 * Everything but the table is shared with 2.0 (status codes, handles,
 * structs, copy kinds, event flags, host functions): it comes from
 * openreg_driver.h, unchanged since 1.0. Each function below means what its
 * 2.0 namesake means (openreg_driver.h documents it), for the driver's one
 * instance instead of a context; a call before `init` succeeded or after
 * `shutdown` is OPENREG_ERROR_NOT_INITIALIZED.
 */
#ifndef OPENREG_DRIVER_ABI_OPENREG_DRIVER_V1_H_
#define OPENREG_DRIVER_ABI_OPENREG_DRIVER_V1_H_

#include "driver_abi/openreg_driver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The newest minor version of major 1. */
#define OPENREG_DRIVER_ABI_V1_VERSION_MINOR 1

typedef struct openreg_driver_api_v1 {
  /* The prefix shared by every major (openreg_driver_api_prefix). */
  size_t struct_size;
  uint32_t abi_version_major; /* 1 */
  uint32_t abi_version_minor;
  const char* driver_name;
  const char* driver_version;

  /* --- Lifecycle (v1.0) ---------------------------------------------------- */
  /* Initializes the driver's one instance; called first, and again only
   * after shutdown. INVALID_ARGUMENT when already initialized. */
  openreg_status (*init)(const openreg_driver_config* config);
  /* Releases the instance; like context_destroy. */
  openreg_status (*shutdown)(void);
  /* Callable before init. */
  const char* (*last_error_message)(void);

  /* --- Devices (v1.0) ------------------------------------------------------ */
  openreg_status (*get_device_count)(int32_t* count);
  openreg_status (*get_device_properties)(int32_t device,
                                          openreg_device_properties* props);

  /* --- Memory (v1.0) ------------------------------------------------------- */
  openreg_status (*device_malloc)(int32_t device, size_t size, void** ptr);
  openreg_status (*device_free)(int32_t device, void* ptr);
  openreg_status (*host_malloc)(size_t size, void** ptr);
  openreg_status (*host_free)(void* ptr);
  openreg_status (*pointer_get_attributes)(const void* ptr,
                                           openreg_pointer_attributes* attributes);
  openreg_status (*mem_get_info)(int32_t device, uint64_t* free_bytes,
                                 uint64_t* total_bytes);

  /* --- Copies (v1.0) ------------------------------------------------------- */
  openreg_status (*memcpy_async)(void* dst, const void* src, size_t size,
                                 int32_t kind, openreg_stream stream);
  openreg_status (*memset_async)(void* ptr, int32_t value, size_t size,
                                 openreg_stream stream);

  /* --- Streams (v1.0) ------------------------------------------------------ */
  openreg_status (*stream_create)(int32_t device, int32_t priority,
                                  openreg_stream* stream);
  openreg_status (*stream_destroy)(openreg_stream stream);
  openreg_status (*stream_query)(openreg_stream stream);
  openreg_status (*stream_synchronize)(openreg_stream stream);
  openreg_status (*stream_wait_event)(openreg_stream stream,
                                      openreg_event event);

  /* --- Events (v1.0) ------------------------------------------------------- */
  openreg_status (*event_create)(int32_t device, uint32_t flags,
                                 openreg_event* event);
  openreg_status (*event_destroy)(openreg_event event);
  openreg_status (*event_record)(openreg_event event, openreg_stream stream);
  openreg_status (*event_query)(openreg_event event);
  openreg_status (*event_synchronize)(openreg_event event);
  openreg_status (*event_elapsed_time)(openreg_event start, openreg_event end,
                                       float* milliseconds);

  /* --- Execution (v1.0) ---------------------------------------------------- */
  openreg_status (*launch_host_func)(openreg_stream stream, openreg_host_fn fn,
                                     void* user_data);
  openreg_status (*device_synchronize)(int32_t device);

  /* --- Optional (v1.1): called only when struct_size covers it and it is
   * not NULL. */
  openreg_status (*stream_get_priority)(openreg_stream stream,
                                        int32_t* priority);
} openreg_driver_api_v1;

#define OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0 \
  OPENREG_STRUCT_SIZE(openreg_driver_api_v1, device_synchronize)
#define OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_1 \
  OPENREG_STRUCT_SIZE(openreg_driver_api_v1, stream_get_priority)

OPENREG_CHECK_NEWEST_STRUCT_SIZE(openreg_driver_api_v1,
                                 OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_1);
OPENREG_STATIC_ASSERT(
    offsetof(openreg_driver_api_v1, driver_version) ==
            offsetof(openreg_driver_api_prefix, driver_version) &&
        offsetof(openreg_driver_api_v1, abi_version_minor) ==
            offsetof(openreg_driver_api_prefix, abi_version_minor),
    "openreg_driver_api_v1 must start with openreg_driver_api_prefix");

/* The entry point of a 1.x driver: the same symbol, handing out a 1.x
 * table. */
typedef openreg_status (*openreg_driver_v1_get_api_fn)(
    uint32_t core_abi_major, uint32_t core_abi_minor,
    const openreg_driver_api_v1** api);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPENREG_DRIVER_ABI_OPENREG_DRIVER_V1_H_ */
