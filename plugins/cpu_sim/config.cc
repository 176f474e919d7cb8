#include "plugins/cpu_sim/config.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/struct_size.h"

namespace openreg::cpu_sim {

using sim::Fail;

namespace {

// cpu_sim knows no option keys, so every non-empty "key=value" item is an
// error; empty items (e.g. from a trailing comma) are ignored.
openreg_status CheckOptions(const char* options) {
  if (options == nullptr) return OPENREG_SUCCESS;
  for (absl::string_view item : absl::StrSplit(options, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) continue;
    const absl::string_view key =
        absl::StripAsciiWhitespace(item.substr(0, item.find('=')));
    if (key.empty()) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("init: option \"%s\" in options \"%s\" has "
                                  "no key; options are comma-separated "
                                  "key=value pairs, and cpu_sim accepts no "
                                  "options",
                                  item, options));
    }
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("init: unknown option key \"%s\" in options "
                                "\"%s\"; cpu_sim accepts no options, pass NULL "
                                "or an empty string",
                                key, options));
  }
  return OPENREG_SUCCESS;
}

}  // namespace

openreg_status ParseConfig(const openreg_driver_config* config,
                           DriverConfig* out) {
  *out = DriverConfig{};
  if (config == nullptr) return OPENREG_SUCCESS;
  if (!SIM_HAS_FIELD(openreg_driver_config, config, device_count)) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("init: config->struct_size is %u, too small "
                                "for any v1.0 field; set it to "
                                "OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0 (%u)",
                                config->struct_size,
                                OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0));
  }
  if (config->device_count < 0 || config->device_count > kMaxDeviceCount) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("init: device_count %d is out of range; "
                                "cpu_sim supports 1 to %d devices (0 selects "
                                "the default of %d)",
                                config->device_count, kMaxDeviceCount,
                                kDefaultDeviceCount));
  }
  if (config->device_count != 0) out->device_count = config->device_count;
  if (SIM_HAS_FIELD(openreg_driver_config, config, device_memory_bytes) &&
      config->device_memory_bytes != 0) {
    out->device_memory_bytes = config->device_memory_bytes;
  }
  if (SIM_HAS_FIELD(openreg_driver_config, config, options)) {
    return CheckOptions(config->options);
  }
  return OPENREG_SUCCESS;
}

}  // namespace openreg::cpu_sim
