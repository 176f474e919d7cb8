/* A complete, plausible table that forgot two functions: event_elapsed_time
 * and stream_get_priority (optional in 1.1, required in 2.0). */
#include "tests/core/driver/broken/broken_driver.h"

static void break_table(openreg_driver_api* table) {
  table->event_elapsed_time = NULL;
  table->stream_get_priority = NULL;
}

BROKEN_DRIVER_ENTRY("missing_function")
