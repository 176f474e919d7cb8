// Versioned-struct helpers: the ABI says a reader or writer touches a field
// only when the struct's struct_size shows the other side knows it.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_STRUCT_SIZE_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_STRUCT_SIZE_H_

#include <cstddef>

#include "driver_abi/openreg_driver.h"

// True when `object` (a pointer to `type`) declares a struct_size that
// includes `field`.
#define SIM_HAS_FIELD(type, object, field) \
  ((object)->struct_size >= OPENREG_STRUCT_SIZE(type, field))

// INVALID_ARGUMENT naming `function` when the caller's `object` (a pointer
// to `type`; the message names both) declares a struct_size too small for
// `first_field`, its first v1.0 field, so the driver could fill nothing;
// else SUCCESS. `v1_0_size` is the type's OPENREG_*_STRUCT_SIZE_V1_0 constant,
// named in the message as the fix.
#define SIM_CHECK_V1_0_STRUCT_SIZE(type, object, first_field, v1_0_size, \
                                   function)                             \
  ::openreg::sim::CheckStructSize(                                       \
      function, #object, #type, (object)->struct_size,                   \
      OPENREG_STRUCT_SIZE(type, first_field), #v1_0_size, v1_0_size)

namespace openreg::sim {

// SIM_CHECK_V1_0_STRUCT_SIZE's check: `struct_size` is at least
// `least_size`.
openreg_status CheckStructSize(const char* function, const char* argument,
                               const char* type, size_t struct_size,
                               size_t least_size, const char* v1_0_size_name,
                               size_t v1_0_size);

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_STRUCT_SIZE_H_
