// What a simulated driver knows about a pointer, and pointer_get_attributes'
// output written from it, honouring the caller's struct_size.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_POINTER_ATTRIBUTES_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_POINTER_ATTRIBUTES_H_

#include <cstdint>

#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/allocation_table.h"

namespace openreg::sim {

struct PointerInfo {
  int32_t memory_type = OPENREG_MEMORY_TYPE_UNREGISTERED;
  int32_t device = -1;  // -1 unless memory_type is DEVICE
  Allocation allocation;
};

// INVALID_ARGUMENT for a NULL `attributes` or a struct_size too small for any
// v1.0 field; otherwise writes the fields struct_size covers.
openreg_status WritePointerAttributes(const PointerInfo& info,
                                      openreg_pointer_attributes* attributes);

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_POINTER_ATTRIBUTES_H_
