#include "plugins/cpu_sim/config.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "plugins/sim_support/error.h"

namespace openreg::cpu_sim {

using sim::Fail;

namespace {

// cpu_sim knows no option keys of its own (sim::ParseConfig has taken the
// shared fault_* and retain_freed_memory ones out), so every non-empty
// "key=value" item left is an error; empty items (e.g. from a trailing comma)
// are ignored.
openreg_status CheckOptions(const std::string& options) {
  for (absl::string_view item : absl::StrSplit(options, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) continue;
    const absl::string_view key =
        absl::StripAsciiWhitespace(item.substr(0, item.find('=')));
    if (key.empty()) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("context_create: option \"%s\" in options "
                                  "\"%s\" has no key; options are "
                                  "comma-separated key=value pairs, and "
                                  "cpu_sim accepts no options but "
                                  "retain_freed_memory and the fault_* ones "
                                  "(docs/configuration.md)",
                                  item, options));
    }
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("context_create: unknown option key \"%s\" in "
                                "options \"%s\"; cpu_sim accepts no options "
                                "but retain_freed_memory, fault_points, "
                                "fault_rate, fault_on_call and fault_seed "
                                "(docs/configuration.md): remove it",
                                key, options));
  }
  return OPENREG_SUCCESS;
}

}  // namespace

openreg_status ParseConfig(const openreg_driver_config* config,
                           sim::SimConfig* out) {
  SIM_RETURN_IF_ERROR(sim::ParseConfig(config, out));
  return CheckOptions(out->options);
}

}  // namespace openreg::cpu_sim
