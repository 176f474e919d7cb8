/* A 1.1 table that leaves the optional stream_get_priority NULL, which ABI
 * 1.1 allows. Unlike the other drivers here it has a context (init and
 * shutdown succeed), one device and streams (opaque tokens that do nothing),
 * so the Driver wrapper, with or without the validation layer, can create a
 * stream and ask for its priority. */
#include "tests/core/driver/broken/broken_driver_v1.h"

static openreg_status working_init(const openreg_driver_config* config) {
  (void)config;
  return OPENREG_SUCCESS;
}
static openreg_status working_shutdown(void) { return OPENREG_SUCCESS; }
static openreg_status one_device(int32_t* count) {
  *count = 1;
  return OPENREG_SUCCESS;
}
static char stream_token;
static openreg_status token_stream_create(int32_t device, int32_t priority,
                                          openreg_stream* stream) {
  (void)device;
  (void)priority;
  *stream = (openreg_stream)&stream_token;
  return OPENREG_SUCCESS;
}
static openreg_status token_stream_destroy(openreg_stream stream) {
  (void)stream;
  return OPENREG_SUCCESS;
}

static void break_table(openreg_driver_api_v1* table) {
  table->init = working_init;
  table->shutdown = working_shutdown;
  table->get_device_count = one_device;
  table->stream_create = token_stream_create;
  table->stream_destroy = token_stream_destroy;
  table->stream_get_priority = NULL;
}

BROKEN_DRIVER_ENTRY("null_optional_function_v1")
