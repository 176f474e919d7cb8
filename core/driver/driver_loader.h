// Finding, loading and validating a driver shared library.
//
// A driver is named by OPENREG_DRIVER: either an absolute path to a `.so`, or
// a short name such as `cpu_sim` that is looked up as
// `libopenreg_<name>.so` in each search directory in order (the package's own
// lib folder first, then every entry of OPENREG_DRIVER_PATH). The loader then
// checks the ABI version and that the function table is complete before the
// core uses it, so a broken driver fails with a message that says exactly
// what is wrong rather than crashing later.
//
// Thread-safety: these functions touch no shared state beyond the dynamic
// loader's own, which is thread-safe.
#ifndef OPENREG_CORE_DRIVER_DRIVER_LOADER_H_
#define OPENREG_CORE_DRIVER_DRIVER_LOADER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "driver_abi/openreg_driver.h"

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

// Checks a table returned by a driver's entry point against the ABI version
// this core implements: matching major version, a struct at least as large as
// the first version with this major and as the minor version it reports (up to
// the newest this core knows), every required (v1.0) function present, and
// sane name and version strings. Names what is wrong. Optional functions of
// later minor versions may be absent.
absl::Status ValidateDriverApi(const openreg_driver_api* api,
                               absl::string_view path);

// A loaded driver library: the dlopen handle and its validated table. The
// table is owned by the library and valid until `Unload`.
struct LoadedDriverLibrary {
  void* handle = nullptr;
  const openreg_driver_api* api = nullptr;
  std::string path;
};

// dlopen()s `path`, calls the entry symbol and validates the table.
absl::StatusOr<LoadedDriverLibrary> LoadDriverLibrary(const std::string& path);

// dlclose()s the library. The caller must have shut the driver down.
void UnloadDriverLibrary(LoadedDriverLibrary& library);

}  // namespace openreg

#endif  // OPENREG_CORE_DRIVER_DRIVER_LOADER_H_
