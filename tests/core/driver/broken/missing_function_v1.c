/* A complete 1.1 table except event_elapsed_time, a required 1.0 function,
 * which is NULL. */
#include "tests/core/driver/broken/broken_driver_v1.h"

static void break_table(openreg_driver_api_v1* table) {
  table->event_elapsed_time = NULL;
}

BROKEN_DRIVER_ENTRY("missing_function_v1")
