#include "core/runtime/runtime_config.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace openreg {
namespace {

struct SizeSuffix {
  absl::string_view name;
  uint64_t multiplier;
};

// Longest suffixes first so "GiB" is not read as "B".
constexpr SizeSuffix kSizeSuffixes[] = {
    {"kib", 1ull << 10}, {"mib", 1ull << 20}, {"gib", 1ull << 30},
    {"tib", 1ull << 40}, {"kb", 1000ull},     {"mb", 1000ull * 1000},
    {"gb", 1000ull * 1000 * 1000},            {"tb", 1000ull * 1000 * 1000 * 1000},
    {"b", 1ull},
};

absl::Status InvalidVariable(const char* name, absl::string_view value,
                             absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat(
      name, "='", value, "' is not valid: expected ", expected,
      ". Fix or unset ", name, " (see docs/configuration.md)."));
}

}  // namespace

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  absl::string_view number = lower;
  uint64_t multiplier = 1;
  for (const SizeSuffix& suffix : kSizeSuffixes) {
    if (absl::ConsumeSuffix(&number, suffix.name)) {
      multiplier = suffix.multiplier;
      break;
    }
  }
  number = absl::StripAsciiWhitespace(number);
  // Plain decimal only: absl's parsers would also take "1e3" or "0x10".
  const bool well_formed =
      !number.empty() &&
      number.find_first_not_of("0123456789.") == absl::string_view::npos &&
      std::count(number.begin(), number.end(), '.') <= 1 &&
      number.front() != '.' && number.back() != '.';
  if (!well_formed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' is not a size: expected a non-negative decimal number "
        "with an optional unit B, KiB, MiB, GiB, TiB, KB, MB, GB or TB, e.g. "
        "'2GiB'"));
  }
  const absl::Status overflow = absl::OutOfRangeError(
      absl::StrCat("size '", text, "' overflows 64 bits"));
  uint64_t whole = 0;
  if (number.find('.') == absl::string_view::npos) {
    if (!absl::SimpleAtoi(number, &whole) || whole > UINT64_MAX / multiplier) {
      return overflow;
    }
    return whole * multiplier;
  }
  double fractional = 0;
  if (!absl::SimpleAtod(number, &fractional) ||
      fractional * static_cast<double>(multiplier) >= 1.8e19) {
    return overflow;
  }
  return static_cast<uint64_t>(fractional * static_cast<double>(multiplier));
}

std::optional<std::string> GetEnvironmentVariable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

absl::StatusOr<RuntimeConfig> RuntimeConfigFromEnvironment(
    const EnvironmentLookup& lookup) {
  RuntimeConfig config;
  if (std::optional<std::string> driver = lookup("OPENREG_DRIVER")) {
    config.driver_spec = std::string(absl::StripAsciiWhitespace(*driver));
  }
  if (std::optional<std::string> path = lookup("OPENREG_DRIVER_PATH")) {
    for (absl::string_view dir : absl::StrSplit(*path, ':', absl::SkipEmpty())) {
      if (dir.front() != '/') {
        return InvalidVariable("OPENREG_DRIVER_PATH", *path,
                               "a ':'-separated list of absolute directories");
      }
      config.extra_driver_dirs.emplace_back(dir);
    }
  }
  if (std::optional<std::string> count = lookup("OPENREG_DEVICE_COUNT")) {
    int32_t parsed = 0;
    if (!absl::SimpleAtoi(*count, &parsed) || parsed < 1 ||
        parsed > kMaxDeviceCount) {
      return InvalidVariable(
          "OPENREG_DEVICE_COUNT", *count,
          absl::StrCat("an integer from 1 to ", kMaxDeviceCount,
                       " (the default is ", kDefaultDeviceCount, ")"));
    }
    config.device_count = parsed;
  }
  if (std::optional<std::string> memory = lookup("OPENREG_DEVICE_MEMORY")) {
    absl::StatusOr<uint64_t> bytes = ParseByteSize(*memory);
    if (!bytes.ok() || *bytes == 0) {
      return InvalidVariable(
          "OPENREG_DEVICE_MEMORY", *memory,
          "a positive size per device such as '2GiB', '512MiB' or a byte "
          "count");
    }
    config.device_memory_bytes = *bytes;
  }
  if (std::optional<std::string> options = lookup("OPENREG_DRIVER_OPTIONS")) {
    // Driver-specific: the driver validates the keys and values in init.
    config.driver_options = std::string(absl::StripAsciiWhitespace(*options));
  }
  if (std::optional<std::string> alloc_conf = lookup("OPENREG_ALLOC_CONF")) {
    absl::StatusOr<AllocatorConfig> allocator = ParseAllocatorConfig(*alloc_conf);
    if (!allocator.ok()) {
      return InvalidVariable("OPENREG_ALLOC_CONF", *alloc_conf,
                             allocator.status().message());
    }
    config.allocator = *allocator;
  }
  if (std::optional<std::string> validation =
          lookup("OPENREG_DRIVER_VALIDATION")) {
    const absl::string_view value = absl::StripAsciiWhitespace(*validation);
    if (value != "0" && value != "1" && !value.empty()) {
      return InvalidVariable("OPENREG_DRIVER_VALIDATION", *validation,
                             "0 (off, the default) or 1 (check every driver "
                             "call)");
    }
    config.driver_validation = value == "1";
  }
  if (std::optional<std::string> blocking = lookup("OPENREG_LAUNCH_BLOCKING")) {
    const absl::string_view value = absl::StripAsciiWhitespace(*blocking);
    if (value != "0" && value != "1" && !value.empty()) {
      return InvalidVariable("OPENREG_LAUNCH_BLOCKING", *blocking,
                             "0 (off, the default: failures of enqueued work "
                             "surface at the next synchronization) or 1 (every "
                             "op waits for its own work and raises where it "
                             "fails)");
    }
    config.launch_blocking = value == "1";
  }
  return config;
}

}  // namespace openreg
