#include "plugins/threaded_sim/options.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "plugins/sim_support/error.h"

namespace openreg::threaded_sim {

using sim::Fail;

namespace {

// One option key: how to read its value into DriverOptions. `Parse` returns
// false when the value is not acceptable; `expected` then says what is.
struct OptionKey {
  const char* name;
  const char* expected;
  bool (*parse)(absl::string_view value, DriverOptions* options);
};

bool ParseInteger(absl::string_view value, int64_t min, int64_t max,
                  int64_t* out) {
  int64_t parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed) || parsed < min || parsed > max) {
    return false;
  }
  *out = parsed;
  return true;
}

constexpr OptionKey kOptionKeys[] = {
    {"execution_slots", "an integer from 1 to 1024",
     [](absl::string_view value, DriverOptions* options) {
       int64_t slots = 0;
       if (!ParseInteger(value, 1, kMaxExecutionSlots, &slots)) return false;
       options->execution_slots = static_cast<int32_t>(slots);
       return true;
     }},
    {"adversarial", "0 or 1",
     [](absl::string_view value, DriverOptions* options) {
       if (value != "0" && value != "1") return false;
       options->adversarial = value == "1";
       return true;
     }},
    {"adversarial_seed", "an unsigned 64-bit integer",
     [](absl::string_view value, DriverOptions* options) {
       return absl::SimpleAtoi(value, &options->adversarial_seed);
     }},
    {"adversarial_max_delay_us", "an integer from 0 to 1000000",
     [](absl::string_view value, DriverOptions* options) {
       return ParseInteger(value, 0, kMaxAdversarialMaxDelayMicros,
                           &options->adversarial_max_delay_us);
     }},
    {"idle_release_ms", "an integer from 0 to 3600000",
     [](absl::string_view value, DriverOptions* options) {
       return ParseInteger(value, 0, kMaxIdleReleaseMillis,
                           &options->idle_release_ms);
     }},
    {"queue_depth", "an integer from 2 to 1048576",
     [](absl::string_view value, DriverOptions* options) {
       return ParseInteger(value, 2, kMaxQueueDepth, &options->queue_depth);
     }},
};

std::string ValidKeys() {
  std::vector<std::string> keys;
  for (const OptionKey& key : kOptionKeys) {
    keys.push_back(absl::StrFormat("%s (%s)", key.name, key.expected));
  }
  return absl::StrJoin(keys, ", ");
}

const OptionKey* FindKey(absl::string_view name) {
  for (const OptionKey& key : kOptionKeys) {
    if (name == key.name) return &key;
  }
  return nullptr;
}

}  // namespace

DriverOptions DefaultOptions() {
  DriverOptions options;
  // hardware_concurrency() may report 0 when it cannot tell.
  options.execution_slots = static_cast<int32_t>(std::clamp<unsigned>(
      std::thread::hardware_concurrency(), 1, kMaxExecutionSlots));
  return options;
}

openreg_status ParseOptions(const char* options, DriverOptions* out) {
  *out = DefaultOptions();
  if (options == nullptr) return OPENREG_SUCCESS;
  std::vector<absl::string_view> seen;
  for (absl::string_view item : absl::StrSplit(options, ',')) {
    item = absl::StripAsciiWhitespace(item);
    // Empty items (e.g. from a trailing comma) are ignored.
    if (item.empty()) continue;
    const size_t equals = item.find('=');
    if (equals == absl::string_view::npos) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("context_create: option \"%s\" in options "
                                  "\"%s\" has no value; options are "
                                  "comma-separated key=value pairs; valid "
                                  "keys: %s",
                                  item, options, ValidKeys()));
    }
    const absl::string_view name =
        absl::StripAsciiWhitespace(item.substr(0, equals));
    const absl::string_view value =
        absl::StripAsciiWhitespace(item.substr(equals + 1));
    const OptionKey* key = FindKey(name);
    if (key == nullptr) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("context_create: unknown option key \"%s\" "
                                  "in options \"%s\"; valid keys: %s, "
                                  "retain_freed_memory and the fault_* keys "
                                  "of docs/fault_injection.md",
                                  name, options, ValidKeys()));
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("context_create: option key \"%s\" appears "
                                  "more than once in options \"%s\"; give "
                                  "each key once",
                                  name, options));
    }
    seen.push_back(name);
    if (!key->parse(value, out)) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("context_create: option %s=\"%s\" is not "
                                  "valid; %s expects %s",
                                  name, value, name, key->expected));
    }
  }
  return OPENREG_SUCCESS;
}

}  // namespace openreg::threaded_sim
