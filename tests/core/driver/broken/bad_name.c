/* Leaves driver_name empty. */
#include "tests/core/driver/broken/broken_driver.h"

static void break_table(openreg_driver_api* table) { table->driver_name = ""; }

BROKEN_DRIVER_ENTRY("bad_name")
