#include "plugins/sim_support/config.h"

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/struct_size.h"

namespace openreg::sim {

openreg_status ParseConfig(const openreg_driver_config* config,
                           SimConfig* out) {
  *out = SimConfig{};
  if (config == nullptr) return OPENREG_SUCCESS;
  if (!SIM_HAS_FIELD(openreg_driver_config, config, device_count)) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("context_create: config->struct_size is %u, "
                                "too small for any v1.0 field; set it to "
                                "OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0 (%u)",
                                config->struct_size,
                                OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0));
  }
  if (config->device_count < 0 || config->device_count > kMaxSimDeviceCount) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("context_create: device_count %d is out of "
                                "range; the driver supports 1 to %d devices "
                                "(0 selects the default of %d)",
                                config->device_count, kMaxSimDeviceCount,
                                kDefaultDeviceCount));
  }
  if (config->device_count != 0) out->device_count = config->device_count;
  if (SIM_HAS_FIELD(openreg_driver_config, config, device_memory_bytes) &&
      config->device_memory_bytes != 0) {
    out->device_memory_bytes = config->device_memory_bytes;
  }
  if (!SIM_HAS_FIELD(openreg_driver_config, config, options)) {
    return OPENREG_SUCCESS;
  }
  return ParseFaultOptions(config->options, &out->faults, &out->options);
}

}  // namespace openreg::sim
