/* Not broken but old: a complete table of ABI 1.0, as a driver built against
 * the 1.0 header hands out. It ends before the functions that 1.1 appended,
 * and the loader must accept it all the same. */
#include "tests/core/driver/broken/broken_driver.h"

static void break_table(openreg_driver_api* table) {
  table->struct_size = OPENREG_DRIVER_API_STRUCT_SIZE_V1_0;
  table->abi_version_minor = 0;
}

BROKEN_DRIVER_ENTRY("version_1_0")
