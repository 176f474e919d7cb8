#include "core/driver/driver_paths.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace openreg {
namespace {

constexpr absl::string_view kFilePrefix = "libopenreg_";
constexpr absl::string_view kFileSuffix = ".so";

std::string SearchDirsForMessage(const std::vector<std::string>& search_dirs) {
  return search_dirs.empty() ? "(no directories)"
                             : absl::StrJoin(search_dirs, ", ");
}

std::string AvailableDriversForMessage(
    const std::vector<std::string>& search_dirs) {
  const std::vector<std::string> available = ListAvailableDrivers(search_dirs);
  return available.empty() ? "none" : absl::StrJoin(available, ", ");
}

}  // namespace

std::string DriverFileName(absl::string_view name) {
  return absl::StrCat(kFilePrefix, name, kFileSuffix);
}

std::vector<std::string> ListAvailableDrivers(
    const std::vector<std::string>& search_dirs) {
  std::vector<std::string> names;
  for (const std::string& dir : search_dirs) {
    DIR* stream = opendir(dir.c_str());
    if (stream == nullptr) continue;
    while (const dirent* entry = readdir(stream)) {
      absl::string_view file = entry->d_name;
      if (absl::StartsWith(file, kFilePrefix) &&
          absl::EndsWith(file, kFileSuffix) &&
          file.size() > kFilePrefix.size() + kFileSuffix.size()) {
        file.remove_prefix(kFilePrefix.size());
        file.remove_suffix(kFileSuffix.size());
        names.emplace_back(file);
      }
    }
    closedir(stream);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

absl::StatusOr<std::string> ResolveDriverPath(
    absl::string_view spec, const std::vector<std::string>& search_dirs) {
  if (spec.empty()) spec = kDefaultDriverName;
  if (absl::StrContains(spec, '/')) {
    if (spec.front() != '/') {
      return absl::InvalidArgumentError(absl::StrCat(
          "OPENREG_DRIVER='", spec,
          "' looks like a relative path; expected a driver name such as "
          "'cpu_sim' or an absolute path to a driver .so file."));
    }
    if (access(std::string(spec).c_str(), R_OK) != 0) {
      return absl::NotFoundError(absl::StrCat(
          "OPENREG_DRIVER='", spec,
          "' names a file that does not exist or cannot be read. Drivers "
          "available by name: ",
          AvailableDriversForMessage(search_dirs), "."));
    }
    return std::string(spec);
  }
  const std::string file = DriverFileName(spec);
  for (const std::string& dir : search_dirs) {
    std::string candidate = absl::StrCat(dir, "/", file);
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(
      "OPENREG_DRIVER='", spec, "' is not a driver that was found (looked for ",
      file, " in ", SearchDirsForMessage(search_dirs), "). Available drivers: ",
      AvailableDriversForMessage(search_dirs),
      ". Set OPENREG_DRIVER to one of them, to an absolute path of a driver "
      ".so, or add the driver's directory to OPENREG_DRIVER_PATH."));
}

}  // namespace openreg
