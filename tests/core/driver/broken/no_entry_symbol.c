/* A shared library that is not an openreg driver: it exports a function with
 * a plausible but wrong name and nothing called openreg_driver_get_api. */
#include "driver_abi/openreg_driver.h"

__attribute__((visibility("default"))) openreg_status openreg_get_driver_api(
    uint32_t core_abi_major, uint32_t core_abi_minor,
    const openreg_driver_api** api) {
  (void)core_abi_major;
  (void)core_abi_minor;
  (void)api;
  return OPENREG_ERROR_NOT_SUPPORTED;
}
