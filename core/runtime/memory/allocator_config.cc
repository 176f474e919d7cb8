#include "core/runtime/memory/allocator_config.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/runtime/memory/size_classes.h"

namespace openreg {
namespace {

// The message completes "expected ...", as runtime_config.cc words it.
absl::Status BadEntry(absl::string_view entry, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(
      "comma-separated key:value entries with the keys "
      "max_split_size_mb:<MiB, more than 20> and release_on_oom:<true|false>, "
      "e.g. 'max_split_size_mb:128'; entry '",
      entry, "' is not valid: ", problem));
}

}  // namespace

absl::StatusOr<AllocatorConfig> ParseAllocatorConfig(absl::string_view text) {
  AllocatorConfig config;
  for (absl::string_view raw : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const absl::string_view entry = absl::StripAsciiWhitespace(raw);
    const std::vector<absl::string_view> parts = absl::StrSplit(entry, ':');
    if (parts.size() != 2) {
      return BadEntry(entry, "it is not a 'key:value' pair");
    }
    const absl::string_view key = absl::StripAsciiWhitespace(parts[0]);
    const absl::string_view value = absl::StripAsciiWhitespace(parts[1]);
    if (key == "max_split_size_mb") {
      // A limit of one large segment or less would leave every freed
      // large segment oversize, unusable for ordinary requests.
      constexpr uint64_t kMinMiB = (kLargeSegmentSize >> 20) + 1;
      constexpr uint64_t kMaxMiB = uint64_t{1} << 40;  // beyond any device
      uint64_t mib = 0;
      if (!absl::SimpleAtoi(value, &mib) || mib < kMinMiB || mib > kMaxMiB) {
        return BadEntry(entry, absl::StrCat("max_split_size_mb must be an "
                                            "integer number of MiB from ",
                                            kMinMiB, " to ", kMaxMiB));
      }
      config.max_split_size = static_cast<size_t>(mib) << 20;
    } else if (key == "release_on_oom") {
      if (!absl::SimpleAtob(value, &config.release_on_oom)) {
        return BadEntry(entry, "release_on_oom must be true or false");
      }
    } else {
      return BadEntry(entry, absl::StrCat("unknown key '", key, "'"));
    }
  }
  return config;
}

}  // namespace openreg
