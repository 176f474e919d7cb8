#include "plugins/sim_support/pointer_attributes.h"

#include "plugins/sim_support/error.h"
#include "plugins/sim_support/struct_size.h"

namespace openreg::sim {

openreg_status WritePointerAttributes(const PointerInfo& info,
                                      openreg_pointer_attributes* attributes) {
  constexpr const char* kFunction = "pointer_get_attributes";
  SIM_RETURN_IF_ERROR(RequireNonNull(attributes, kFunction, "attributes"));
  SIM_RETURN_IF_ERROR(SIM_CHECK_V1_0_STRUCT_SIZE(
      openreg_pointer_attributes, attributes, memory_type,
      OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0, kFunction));
  attributes->memory_type = info.memory_type;
  if (SIM_HAS_FIELD(openreg_pointer_attributes, attributes, device)) {
    attributes->device = info.device;
  }
  if (SIM_HAS_FIELD(openreg_pointer_attributes, attributes, base)) {
    attributes->base = info.allocation.base;
  }
  if (SIM_HAS_FIELD(openreg_pointer_attributes, attributes, size)) {
    attributes->size = info.allocation.size;
  }
  return OPENREG_SUCCESS;
}

}  // namespace openreg::sim
