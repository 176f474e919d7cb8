/* Reports ABI 1.1 but hands out a 1.0-sized table, as a driver does that
 * bumps abi_version_minor (or uses OPENREG_DRIVER_ABI_VERSION_MINOR) without
 * appending the 1.1 functions: it would claim functions it does not have. */
#include "tests/core/driver/broken/broken_driver.h"

static void break_table(openreg_driver_api* table) {
  table->struct_size = OPENREG_DRIVER_API_STRUCT_SIZE_V1_0;
  table->abi_version_minor = 1;
}

BROKEN_DRIVER_ENTRY("minor_without_fields")
