#include "plugins/sim_support/config.h"

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/struct_size.h"

namespace openreg::sim {
namespace {

constexpr absl::string_view kRetainKey = "retain_freed_memory";

// "N", "NKiB", "NMiB" or "NGiB" (N a decimal integer) as bytes; false when
// `value` is none of them or does not fit 64 bits.
bool ParseByteCount(absl::string_view value, uint64_t* bytes) {
  const size_t digits = value.find_first_not_of("0123456789");
  const absl::string_view unit =
      digits == absl::string_view::npos ? "" : value.substr(digits);
  int shift = 0;
  if (unit == "KiB") {
    shift = 10;
  } else if (unit == "MiB") {
    shift = 20;
  } else if (unit == "GiB") {
    shift = 30;
  } else if (!unit.empty()) {
    return false;
  }
  uint64_t count = 0;
  if (!absl::SimpleAtoi(value.substr(0, digits), &count)) return false;
  if (count > (~uint64_t{0} >> shift)) return false;
  *bytes = count << shift;
  return true;
}

// Takes the retain_freed_memory item out of `options` into `out`, leaving the
// other items, for the driver's own parser.
openreg_status ParseMemoryOptions(std::string* options, SimConfig* out) {
  std::string rest;
  bool seen = false;
  for (absl::string_view item : absl::StrSplit(*options, ',')) {
    const size_t equals = item.find('=');
    if (absl::StripAsciiWhitespace(item.substr(0, equals)) != kRetainKey) {
      absl::StrAppend(&rest, rest.empty() ? "" : ",", item);
      continue;
    }
    const absl::string_view value =
        equals == absl::string_view::npos
            ? ""
            : absl::StripAsciiWhitespace(item.substr(equals + 1));
    if (seen) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("context_create: option key \"%s\" appears "
                                  "more than once in options \"%s\"; give it "
                                  "once",
                                  kRetainKey, *options));
    }
    seen = true;
    if (!ParseByteCount(value, &out->retain_freed_bytes)) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("context_create: %s=\"%s\" in options "
                                  "\"%s\" is not valid; expected a byte "
                                  "count below 2^64, optionally with a unit "
                                  "KiB, MiB or GiB (e.g. %s=64MiB; 0 retains "
                                  "nothing)",
                                  kRetainKey, value, *options, kRetainKey));
    }
  }
  *options = std::move(rest);
  return OPENREG_SUCCESS;
}

}  // namespace

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
  SIM_RETURN_IF_ERROR(
      ParseFaultOptions(config->options, &out->faults, &out->options));
  return ParseMemoryOptions(&out->options, out);
}

}  // namespace openreg::sim
