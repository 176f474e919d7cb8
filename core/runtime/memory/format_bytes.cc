#include "core/runtime/memory/format_bytes.h"

#include "absl/strings/str_format.h"

namespace openreg {

std::string FormatBytes(uint64_t bytes) {
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return absl::StrFormat("%d bytes", bytes);
  double scaled = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (scaled >= 1024 && unit + 1 < 4) {
    scaled /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.2f %s (%d bytes)", scaled, kUnits[unit], bytes);
}

}  // namespace openreg
