/* A 1.1 table that leaves the optional stream_get_priority NULL, which ABI
 * 1.1 allows. Unlike the other drivers here its init and shutdown succeed, so
 * the Driver wrapper can create its context and report the function as not
 * supported. */
#include "tests/core/driver/broken/broken_driver_v1.h"

static openreg_status working_init(const openreg_driver_config* config) {
  (void)config;
  return OPENREG_SUCCESS;
}
static openreg_status working_shutdown(void) { return OPENREG_SUCCESS; }

static void break_table(openreg_driver_api_v1* table) {
  table->init = working_init;
  table->shutdown = working_shutdown;
  table->stream_get_priority = NULL;
}

BROKEN_DRIVER_ENTRY("null_optional_function_v1")
