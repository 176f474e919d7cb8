// Versioned-struct helper: the ABI says a reader or writer touches a field
// only when the struct's struct_size shows the other side knows it.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_STRUCT_SIZE_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_STRUCT_SIZE_H_

#include "driver_abi/openreg_driver.h"

// True when `object` (a pointer to `type`) declares a struct_size that
// includes `field`.
#define SIM_HAS_FIELD(type, object, field) \
  ((object)->struct_size >= OPENREG_STRUCT_SIZE(type, field))

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_STRUCT_SIZE_H_
