/* Reports a 1.x table one function pointer smaller than ABI 1.0 requires. */
#include "tests/core/driver/broken/broken_driver_v1.h"

static void break_table(openreg_driver_api_v1* table) {
  table->abi_version_minor = 0;
  table->struct_size = OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0 - sizeof(void*);
}

BROKEN_DRIVER_ENTRY("small_table_v1")
