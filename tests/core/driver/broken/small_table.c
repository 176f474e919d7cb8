/* Reports a table one function pointer smaller than ABI 2.0 requires, as a
 * driver built against a pre-release header without device_synchronize would.
 */
#include "tests/core/driver/broken/broken_driver.h"

static void break_table(openreg_driver_api* table) {
  table->struct_size = OPENREG_DRIVER_API_STRUCT_SIZE_V2_0 - sizeof(void*);
}

BROKEN_DRIVER_ENTRY("small_table")
