#include "plugins/sim_support/fault_injector.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {
namespace {

constexpr const char* kPointNames[kFaultPointCount] = {
    "device_malloc", "host_malloc",      "memcpy_async",
    "memset_async",  "launch_host_func", "event_record",
};
constexpr const char* kValidPoints =
    "device_malloc, host_malloc, memcpy_async, memset_async, "
    "launch_host_func, event_record";

// The statuses a fault may inject: failures a caller must handle.
constexpr openreg_status kInjectable[] = {
    OPENREG_ERROR_INVALID_ARGUMENT, OPENREG_ERROR_OUT_OF_MEMORY,
    OPENREG_ERROR_NOT_SUPPORTED,    OPENREG_ERROR_LAUNCH_FAILURE,
    OPENREG_ERROR_INTERNAL,
};
constexpr const char* kValidStatuses =
    "INVALID_ARGUMENT, OUT_OF_MEMORY, NOT_SUPPORTED, LAUNCH_FAILURE or "
    "INTERNAL";

openreg_status DefaultStatus(int point) {
  return point == static_cast<int>(FaultPoint::kDeviceMalloc) ||
                 point == static_cast<int>(FaultPoint::kHostMalloc)
             ? OPENREG_ERROR_OUT_OF_MEMORY
             : OPENREG_ERROR_LAUNCH_FAILURE;
}

// "OPENREG_ERROR_OUT_OF_MEMORY" without its prefix.
absl::string_view ShortName(openreg_status status) {
  absl::string_view name = StatusName(status);
  absl::ConsumePrefix(&name, "OPENREG_ERROR_");
  return name;
}

openreg_status Invalid(const char* options, const std::string& what) {
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("context_create: %s in options \"%s\"; see "
                              "docs/fault_injection.md",
                              what, options));
}

openreg_status ParsePoints(const char* options, absl::string_view value,
                           FaultPlan* plan) {
  for (absl::string_view item : absl::StrSplit(value, '+')) {
    const size_t colon = item.find(':');
    const absl::string_view name = item.substr(0, colon);
    const auto* found =
        std::find(std::begin(kPointNames), std::end(kPointNames), name);
    if (found == std::end(kPointNames)) {
      return Invalid(options,
                     absl::StrFormat("fault_points names \"%s\", which is not "
                                     "an entry point faults can be injected "
                                     "into; expected a '+'-separated list of "
                                     "%s, each optionally followed by "
                                     ":STATUS",
                                     name, kValidPoints));
    }
    const int point = static_cast<int>(found - std::begin(kPointNames));
    openreg_status status = DefaultStatus(point);
    if (colon != absl::string_view::npos) {
      const absl::string_view wanted = item.substr(colon + 1);
      const auto* match = std::find_if(
          std::begin(kInjectable), std::end(kInjectable),
          [&](openreg_status s) { return ShortName(s) == wanted; });
      if (match == std::end(kInjectable)) {
        return Invalid(options,
                       absl::StrFormat("fault_points gives %s the status "
                                       "\"%s\"; expected %s",
                                       name, wanted, kValidStatuses));
      }
      status = *match;
    }
    plan->status[point] = status;
  }
  return OPENREG_SUCCESS;
}

// A uniform draw in [0, 1) from (seed, point, call): splitmix64's finalizer,
// so the draw of one call never depends on which threads made the others.
double Draw(uint64_t seed, int point, uint64_t call) {
  uint64_t x = seed ^ (static_cast<uint64_t>(point) << 56) ^
               (call * 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

}  // namespace

const char* FaultPointName(FaultPoint point) {
  return kPointNames[static_cast<int>(point)];
}

openreg_status ParseFaultOptions(const char* options, FaultPlan* plan,
                                 std::string* rest) {
  *plan = FaultPlan{};
  rest->clear();
  if (options == nullptr) return OPENREG_SUCCESS;
  std::vector<absl::string_view> seen;
  bool has_points = false;
  bool has_rate = false;
  for (absl::string_view item : absl::StrSplit(options, ',')) {
    item = absl::StripAsciiWhitespace(item);
    const size_t equals = item.find('=');
    const absl::string_view name =
        absl::StripAsciiWhitespace(item.substr(0, equals));
    if (!absl::StartsWith(name, "fault_")) {
      if (!item.empty()) absl::StrAppend(rest, rest->empty() ? "" : ",", item);
      continue;
    }
    if (equals == absl::string_view::npos) {
      return Invalid(options, absl::StrFormat("option \"%s\" has no value; "
                                              "expected %s=VALUE",
                                              item, name));
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return Invalid(options, absl::StrFormat("option key \"%s\" appears more "
                                              "than once; give it once",
                                              name));
    }
    seen.push_back(name);
    const absl::string_view value =
        absl::StripAsciiWhitespace(item.substr(equals + 1));
    if (name == "fault_points") {
      SIM_RETURN_IF_ERROR(ParsePoints(options, value, plan));
      has_points = true;
    } else if (name == "fault_rate") {
      if (!absl::SimpleAtod(value, &plan->rate) || !(plan->rate >= 0) ||
          plan->rate > 1) {
        return Invalid(options, absl::StrFormat("fault_rate=\"%s\" is not "
                                                "valid; expected a number "
                                                "from 0 to 1",
                                                value));
      }
      has_rate = true;
    } else if (name == "fault_on_call") {
      if (!absl::SimpleAtoi(value, &plan->on_call) || plan->on_call == 0) {
        return Invalid(options, absl::StrFormat("fault_on_call=\"%s\" is not "
                                                "valid; expected a call "
                                                "number from 1",
                                                value));
      }
    } else if (name == "fault_seed") {
      if (!absl::SimpleAtoi(value, &plan->seed)) {
        return Invalid(options, absl::StrFormat("fault_seed=\"%s\" is not "
                                                "valid; expected an unsigned "
                                                "64-bit integer",
                                                value));
      }
    } else {
      return Invalid(options,
                     absl::StrFormat("unknown fault option \"%s\"; the fault "
                                     "options are fault_points, fault_rate, "
                                     "fault_on_call and fault_seed",
                                     name));
    }
  }
  if (has_rate && plan->on_call != 0) {
    return Invalid(options,
                   "fault_rate and fault_on_call are both given; "
                   "expected one of them");
  }
  if (!seen.empty() && !has_points) {
    return Invalid(options,
                   "fault options without fault_points; expected "
                   "fault_points naming the entry points to fail");
  }
  if (has_points && !has_rate && plan->on_call == 0) {
    return Invalid(options,
                   "fault_points without fault_rate or "
                   "fault_on_call; expected one of them to say when "
                   "calls fail");
  }
  return OPENREG_SUCCESS;
}

openreg_status FaultInjector::MaybeFail(FaultPoint point,
                                        const char* function) {
  const int index = static_cast<int>(point);
  const openreg_status status = plan_.status[index];
  if (status == OPENREG_SUCCESS) return OPENREG_SUCCESS;
  const uint64_t call = calls_[index].fetch_add(1) + 1;
  const bool fails = plan_.on_call != 0
                         ? call == plan_.on_call
                         : Draw(plan_.seed, index, call) < plan_.rate;
  if (!fails) return OPENREG_SUCCESS;
  injected_[index].fetch_add(1);
  const std::string when =
      plan_.on_call != 0 ? absl::StrFormat("fault_on_call=%u", plan_.on_call)
                         : absl::StrFormat("fault_rate=%g, fault_seed=%u",
                                           plan_.rate, plan_.seed);
  return Fail(status,
              absl::StrFormat("%s: injected fault %s on call %u of %s, as the "
                              "driver options ask (fault_points names %s; "
                              "%s); not a real failure, see "
                              "docs/fault_injection.md",
                              function, ShortName(status), call,
                              kPointNames[index], kPointNames[index], when));
}

}  // namespace openreg::sim
