/* Reports ABI 1.1 but hands out a 1.0-sized table, as a 1.x driver does that
 * bumps abi_version_minor without appending the 1.1 functions: it would
 * claim functions it does not have. */
#include "tests/core/driver/broken/broken_driver_v1.h"

static void break_table(openreg_driver_api_v1* table) {
  table->struct_size = OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0;
  table->abi_version_minor = 1;
}

BROKEN_DRIVER_ENTRY("minor_without_fields_v1")
