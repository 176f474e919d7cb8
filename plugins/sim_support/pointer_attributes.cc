#include "plugins/sim_support/pointer_attributes.h"

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/struct_size.h"

namespace openreg::sim {

openreg_status WritePointerAttributes(const PointerInfo& info,
                                      openreg_pointer_attributes* attributes) {
  constexpr const char* kFunction = "pointer_get_attributes";
  SIM_RETURN_IF_ERROR(RequireNonNull(attributes, kFunction, "attributes"));
  if (!SIM_HAS_FIELD(openreg_pointer_attributes, attributes, memory_type)) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: attributes->struct_size is %u, too small "
                                "for any v1.0 field (at least %u); set it to "
                                "OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0 "
                                "(%u) or sizeof(openreg_pointer_attributes)",
                                kFunction, attributes->struct_size,
                                OPENREG_STRUCT_SIZE(openreg_pointer_attributes,
                                                    memory_type),
                                OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0));
  }
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
