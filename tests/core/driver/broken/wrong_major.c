/* Built against a future ABI: the major version is one past the core's. */
#include "tests/core/driver/broken/broken_driver.h"

static void break_table(openreg_driver_api* table) {
  table->abi_version_major = OPENREG_DRIVER_ABI_VERSION_MAJOR + 1;
}

BROKEN_DRIVER_ENTRY("wrong_major")
