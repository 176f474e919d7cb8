/* A complete, plausible table that forgot one function: event_elapsed_time. */
#include "tests/core/driver/broken/broken_driver.h"

static void break_table(openreg_driver_api* table) {
  table->event_elapsed_time = NULL;
}

BROKEN_DRIVER_ENTRY("missing_function")
