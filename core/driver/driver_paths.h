// Finding a driver shared library by name.
//
// A driver is named by OPENREG_DRIVER: either an absolute path to a `.so`, or
// a short name such as `cpu_sim` that is looked up as
// `libopenreg_<name>.so` in each search directory in order (the package's own
// lib folder first, then every entry of OPENREG_DRIVER_PATH). Loading and
// validating the file is DriverLibrary's job (driver_library.h).
//
// Thread-safety: these functions touch no shared state beyond the file
// system's.
#ifndef OPENREG_CORE_DRIVER_DRIVER_PATHS_H_
#define OPENREG_CORE_DRIVER_DRIVER_PATHS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace openreg {

// The driver used when OPENREG_DRIVER is unset or empty.
inline constexpr absl::string_view kDefaultDriverName = "cpu_sim";

// `libopenreg_<name>.so`.
std::string DriverFileName(absl::string_view name);

// Names of the drivers present in `search_dirs`, sorted, without duplicates.
std::vector<std::string> ListAvailableDrivers(
    const std::vector<std::string>& search_dirs);

// Resolves a driver spec (a name or an absolute path) to a file path. An
// unknown name is kNotFound with a message listing every driver that is
// available and where the loader looked.
absl::StatusOr<std::string> ResolveDriverPath(
    absl::string_view spec, const std::vector<std::string>& search_dirs);

}  // namespace openreg

#endif  // OPENREG_CORE_DRIVER_DRIVER_PATHS_H_
