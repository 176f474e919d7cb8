#include "plugins/sim_support/driver_table.h"

#include "plugins/sim_support/error.h"

namespace openreg::sim {

openreg_status HandOutDriverApi(const openreg_driver_api* table,
                                const openreg_driver_api** api) {
  if (api == nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "openreg_driver_get_api: argument 'api' is NULL; pass the "
                "address of a const openreg_driver_api* to receive the table");
  }
  *api = table;
  return OPENREG_SUCCESS;
}

}  // namespace openreg::sim
