/*
 * Shared by the deliberately broken drivers in this folder: one stub per
 * function of the driver ABI, generated from its function list, and a helper
 * that fills a complete, valid-looking 2.0 table with them. Each driver starts
 * from that table and changes exactly one thing, so the loader's verdict can
 * only come from that one change. Every stub fails with
 * OPENREG_ERROR_NOT_SUPPORTED (last_error_message returns a fixed text), so
 * no context of these drivers can be created.
 *
 * Plain C that includes only openreg_driver.h, as a real driver would.
 */
#ifndef OPENREG_TESTS_CORE_DRIVER_BROKEN_BROKEN_DRIVER_H_
#define OPENREG_TESTS_CORE_DRIVER_BROKEN_BROKEN_DRIVER_H_

#include "driver_abi/openreg_driver.h"

#define BROKEN_DRIVER_EXPORT __attribute__((visibility("default")))

static const char broken_message[] = "broken test driver: not implemented";

/* broken_<name>: the stub of each function. _Generic picks the failure of
 * the function's return type. */
#define BROKEN_STUB(minor, return_type, name, params)                     \
  static return_type broken_##name params {                               \
    return _Generic((return_type)0, const char*: broken_message,          \
                    default: OPENREG_ERROR_NOT_SUPPORTED);                \
  }
OPENREG_DRIVER_FUNCTIONS(BROKEN_STUB)
#undef BROKEN_STUB

#define BROKEN_ENTRY(minor, return_type, name, params) .name = broken_##name,

/* A complete 2.0 table named `name`. */
static openreg_driver_api broken_driver_full_table(const char* name) {
  openreg_driver_api api = {
      .struct_size = sizeof(openreg_driver_api),
      .abi_version_major = OPENREG_DRIVER_ABI_VERSION_MAJOR,
      .abi_version_minor = OPENREG_DRIVER_ABI_VERSION_MINOR,
      .driver_name = name,
      .driver_version = "0.0.1",
      OPENREG_DRIVER_FUNCTIONS(BROKEN_ENTRY)};
  return api;
}

#undef BROKEN_ENTRY

/* Defines the entry point. The including file first defines
 *   static void break_table(openreg_driver_api* table);
 * which breaks the one thing the driver is about; the entry point hands out a
 * full table named `name` with that defect. */
#define BROKEN_DRIVER_ENTRY(name)                                  \
  static openreg_driver_api broken_table;                          \
  BROKEN_DRIVER_EXPORT openreg_status OPENREG_DRIVER_ENTRY_SYMBOL( \
      uint32_t core_abi_major, uint32_t core_abi_minor,            \
      const openreg_driver_api** api) {                            \
    (void)core_abi_major;                                          \
    (void)core_abi_minor;                                          \
    if (api == NULL) return OPENREG_ERROR_INVALID_ARGUMENT;        \
    broken_table = broken_driver_full_table(name);                 \
    break_table(&broken_table);                                    \
    *api = &broken_table;                                          \
    return OPENREG_SUCCESS;                                        \
  }

#endif /* OPENREG_TESTS_CORE_DRIVER_BROKEN_BROKEN_DRIVER_H_ */
