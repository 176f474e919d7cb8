/* An entry point that cannot serve any ABI version the core asks for. */
#include "driver_abi/openreg_driver.h"

__attribute__((visibility("default"))) openreg_status
OPENREG_DRIVER_ENTRY_SYMBOL(uint32_t core_abi_major, uint32_t core_abi_minor,
                            const openreg_driver_api** api) {
  (void)core_abi_major;
  (void)core_abi_minor;
  (void)api;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
