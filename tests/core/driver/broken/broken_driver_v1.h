/*
 * broken_driver.h for drivers of the frozen ABI 1.x (openreg_driver_v1.h),
 * which has no function list to generate stubs from: one stub per function
 * signature and a helper that fills a complete, valid-looking 1.1 table with
 * them. Each driver starts from that table and changes exactly one thing, so
 * the loader's verdict can only come from that one change. Every stub returns
 * OPENREG_ERROR_NOT_SUPPORTED, init and shutdown included, so none of these
 * drivers can be initialized unless it replaces those two.
 *
 * Plain C that includes only openreg_driver_v1.h, as a 1.x driver would.
 */
#ifndef OPENREG_TESTS_CORE_DRIVER_BROKEN_BROKEN_DRIVER_V1_H_
#define OPENREG_TESTS_CORE_DRIVER_BROKEN_BROKEN_DRIVER_V1_H_

#include "driver_abi/openreg_driver_v1.h"

#define BROKEN_DRIVER_EXPORT __attribute__((visibility("default")))

static openreg_status broken_config(const openreg_driver_config* config) {
  (void)config;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_void(void) { return OPENREG_ERROR_NOT_SUPPORTED; }
static const char* broken_message(void) {
  return "broken test driver: not implemented";
}
static openreg_status broken_count(int32_t* count) {
  (void)count;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_properties(int32_t device,
                                        openreg_device_properties* props) {
  (void)device;
  (void)props;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_device_malloc(int32_t device, size_t size,
                                           void** ptr) {
  (void)device;
  (void)size;
  (void)ptr;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_device_ptr(int32_t device, void* ptr) {
  (void)device;
  (void)ptr;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_host_malloc(size_t size, void** ptr) {
  (void)size;
  (void)ptr;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_ptr(void* ptr) {
  (void)ptr;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_attributes(const void* ptr,
                                        openreg_pointer_attributes* attrs) {
  (void)ptr;
  (void)attrs;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_mem_info(int32_t device, uint64_t* free_bytes,
                                      uint64_t* total_bytes) {
  (void)device;
  (void)free_bytes;
  (void)total_bytes;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_memcpy(void* dst, const void* src, size_t size,
                                    int32_t kind, openreg_stream stream) {
  (void)dst;
  (void)src;
  (void)size;
  (void)kind;
  (void)stream;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_memset(void* ptr, int32_t value, size_t size,
                                    openreg_stream stream) {
  (void)ptr;
  (void)value;
  (void)size;
  (void)stream;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_stream_create(int32_t device, int32_t priority,
                                           openreg_stream* stream) {
  (void)device;
  (void)priority;
  (void)stream;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_stream(openreg_stream stream) {
  (void)stream;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_stream_event(openreg_stream stream,
                                          openreg_event event) {
  (void)stream;
  (void)event;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_event_create(int32_t device, uint32_t flags,
                                          openreg_event* event) {
  (void)device;
  (void)flags;
  (void)event;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_event(openreg_event event) {
  (void)event;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_event_stream(openreg_event event,
                                          openreg_stream stream) {
  (void)event;
  (void)stream;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_elapsed(openreg_event start, openreg_event end,
                                     float* milliseconds) {
  (void)start;
  (void)end;
  (void)milliseconds;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_launch(openreg_stream stream, openreg_host_fn fn,
                                    void* user_data) {
  (void)stream;
  (void)fn;
  (void)user_data;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_device(int32_t device) {
  (void)device;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
static openreg_status broken_stream_priority(openreg_stream stream,
                                             int32_t* priority) {
  (void)stream;
  (void)priority;
  return OPENREG_ERROR_NOT_SUPPORTED;
}

/* A complete 1.1 table named `name`, which a broken driver then breaks. */
static openreg_driver_api_v1 broken_driver_full_table(const char* name) {
  openreg_driver_api_v1 api = {
      .struct_size = OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_1,
      .abi_version_major = 1,
      .abi_version_minor = OPENREG_DRIVER_ABI_V1_VERSION_MINOR,
      .driver_name = name,
      .driver_version = "0.0.1",
      .init = broken_config,
      .shutdown = broken_void,
      .last_error_message = broken_message,
      .get_device_count = broken_count,
      .get_device_properties = broken_properties,
      .device_malloc = broken_device_malloc,
      .device_free = broken_device_ptr,
      .host_malloc = broken_host_malloc,
      .host_free = broken_ptr,
      .pointer_get_attributes = broken_attributes,
      .mem_get_info = broken_mem_info,
      .memcpy_async = broken_memcpy,
      .memset_async = broken_memset,
      .stream_create = broken_stream_create,
      .stream_destroy = broken_stream,
      .stream_query = broken_stream,
      .stream_synchronize = broken_stream,
      .stream_wait_event = broken_stream_event,
      .event_create = broken_event_create,
      .event_destroy = broken_event,
      .event_record = broken_event_stream,
      .event_query = broken_event,
      .event_synchronize = broken_event,
      .event_elapsed_time = broken_elapsed,
      .launch_host_func = broken_launch,
      .device_synchronize = broken_device,
      .stream_get_priority = broken_stream_priority,
  };
  return api;
}

/* Defines the entry point. The including file first defines
 *   static void break_table(openreg_driver_api_v1* table);
 * which breaks the one thing the driver is about; the entry point hands out a
 * full table named `name` with that defect. */
#define BROKEN_DRIVER_ENTRY(name)                                  \
  static openreg_driver_api_v1 broken_table;                          \
  BROKEN_DRIVER_EXPORT openreg_status OPENREG_DRIVER_ENTRY_SYMBOL( \
      uint32_t core_abi_major, uint32_t core_abi_minor,            \
      const openreg_driver_api_v1** api) {                            \
    (void)core_abi_major;                                          \
    (void)core_abi_minor;                                          \
    if (api == NULL) return OPENREG_ERROR_INVALID_ARGUMENT;        \
    broken_table = broken_driver_full_table(name);                 \
    break_table(&broken_table);                                    \
    *api = &broken_table;                                          \
    return OPENREG_SUCCESS;                                        \
  }

#endif /* OPENREG_TESTS_CORE_DRIVER_BROKEN_BROKEN_DRIVER_V1_H_ */
