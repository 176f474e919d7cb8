#include "plugins/sim_support/struct_size.h"

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {

openreg_status CheckStructSize(const char* function, const char* argument,
                               const char* type, size_t struct_size,
                               size_t least_size, const char* v1_0_size_name,
                               size_t v1_0_size) {
  if (struct_size >= least_size) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("%s: %s->struct_size is %u, too small for any "
                              "v1.0 field (at least %u); set it to %s (%u) or "
                              "sizeof(%s)",
                              function, argument, struct_size, least_size,
                              v1_0_size_name, v1_0_size, type));
}

}  // namespace openreg::sim
