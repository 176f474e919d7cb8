#include "core/driver/driver_loader.h"

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/driver/driver_status.h"

namespace openreg {
namespace {

constexpr absl::string_view kFilePrefix = "libopenreg_";
constexpr absl::string_view kFileSuffix = ".so";

// Every function of ABI v1.0, with its offset in the table, so validation can
// name a missing one. Functions of later minor versions are optional (see
// openreg_driver.h) and are not listed: the Driver wrapper checks each when it
// is called, so a driver without one still loads.
struct RequiredFunction {
  const char* name;
  size_t offset;
};

#define OPENREG_REQUIRED_FUNCTION(field) \
  RequiredFunction{#field, offsetof(openreg_driver_api, field)}

constexpr RequiredFunction kRequiredFunctionsV1_0[] = {
    OPENREG_REQUIRED_FUNCTION(init),
    OPENREG_REQUIRED_FUNCTION(shutdown),
    OPENREG_REQUIRED_FUNCTION(last_error_message),
    OPENREG_REQUIRED_FUNCTION(get_device_count),
    OPENREG_REQUIRED_FUNCTION(get_device_properties),
    OPENREG_REQUIRED_FUNCTION(device_malloc),
    OPENREG_REQUIRED_FUNCTION(device_free),
    OPENREG_REQUIRED_FUNCTION(host_malloc),
    OPENREG_REQUIRED_FUNCTION(host_free),
    OPENREG_REQUIRED_FUNCTION(pointer_get_attributes),
    OPENREG_REQUIRED_FUNCTION(mem_get_info),
    OPENREG_REQUIRED_FUNCTION(memcpy_async),
    OPENREG_REQUIRED_FUNCTION(memset_async),
    OPENREG_REQUIRED_FUNCTION(stream_create),
    OPENREG_REQUIRED_FUNCTION(stream_destroy),
    OPENREG_REQUIRED_FUNCTION(stream_query),
    OPENREG_REQUIRED_FUNCTION(stream_synchronize),
    OPENREG_REQUIRED_FUNCTION(stream_wait_event),
    OPENREG_REQUIRED_FUNCTION(event_create),
    OPENREG_REQUIRED_FUNCTION(event_destroy),
    OPENREG_REQUIRED_FUNCTION(event_record),
    OPENREG_REQUIRED_FUNCTION(event_query),
    OPENREG_REQUIRED_FUNCTION(event_synchronize),
    OPENREG_REQUIRED_FUNCTION(event_elapsed_time),
    OPENREG_REQUIRED_FUNCTION(launch_host_func),
    OPENREG_REQUIRED_FUNCTION(device_synchronize),
};

#undef OPENREG_REQUIRED_FUNCTION

// The table size of each minor version of major version 1, by minor. A table
// must be at least as large as the minor version it reports (capped at the
// newest this core knows): a driver that bumps abi_version_minor without
// appending the new fields would otherwise claim functions it does not have.
constexpr size_t kTableSizeOfMinorVersion[] = {
    OPENREG_DRIVER_API_STRUCT_SIZE_V1_0,
    OPENREG_DRIVER_API_STRUCT_SIZE_V1_1,
};
static_assert(std::size(kTableSizeOfMinorVersion) ==
                  OPENREG_DRIVER_ABI_VERSION_MINOR + 1,
              "add the table size of the new minor version");

bool IsSaneString(const char* text) {
  if (text == nullptr || *text == '\0') return false;
  for (const char* c = text; *c != '\0'; ++c) {
    if (c - text >= 256 || !std::isprint(static_cast<unsigned char>(*c))) {
      return false;
    }
  }
  return true;
}

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

absl::Status ValidateDriverApi(const openreg_driver_api* api,
                               absl::string_view path) {
  if (api == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "driver ", path, ": ", OPENREG_DRIVER_ENTRY_SYMBOL_NAME,
        " returned success but no function table."));
  }
  // The version fields sit right after struct_size in every ABI version; a
  // table too small to hold them cannot be read at all.
  if (api->struct_size < offsetof(openreg_driver_api, driver_name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "driver ", path, " reports a function table of only ", api->struct_size,
        " bytes, too small to hold its ABI version. Set struct_size = "
        "OPENREG_DRIVER_API_STRUCT_SIZE_V1_0."));
  }
  if (api->abi_version_major != OPENREG_DRIVER_ABI_VERSION_MAJOR) {
    return absl::FailedPreconditionError(absl::StrCat(
        "driver ", path, " implements driver ABI version ",
        api->abi_version_major, ".", api->abi_version_minor,
        ", but this openreg core implements ABI version ",
        OPENREG_DRIVER_ABI_VERSION_MAJOR, ".", OPENREG_DRIVER_ABI_VERSION_MINOR,
        "; major versions must match. Rebuild the driver against this "
        "core's driver_abi/openreg_driver.h."));
  }
  if (api->struct_size < OPENREG_DRIVER_API_STRUCT_SIZE_V1_0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "driver ", path, " reports a function table of ", api->struct_size,
        " bytes; ABI version 1.0 requires at least ",
        OPENREG_DRIVER_API_STRUCT_SIZE_V1_0,
        " bytes. Set struct_size = OPENREG_DRIVER_API_STRUCT_SIZE_V1_0 (or "
        "sizeof(openreg_driver_api))."));
  }
  const uint32_t known_minor =
      std::min<uint32_t>(api->abi_version_minor, OPENREG_DRIVER_ABI_VERSION_MINOR);
  if (api->struct_size < kTableSizeOfMinorVersion[known_minor]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "driver ", path, " reports ABI version 1.", api->abi_version_minor,
        " but a function table of ", api->struct_size, " bytes; ABI version 1.",
        known_minor, " has a table of ", kTableSizeOfMinorVersion[known_minor],
        " bytes. Set struct_size = OPENREG_DRIVER_API_STRUCT_SIZE_V1_",
        known_minor, " and fill the functions of that version, or report the "
        "minor version whose table you fill."));
  }
  if (!IsSaneString(api->driver_name) || !IsSaneString(api->driver_version)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "driver ", path,
        " must set driver_name and driver_version to non-empty printable "
        "strings of at most 256 characters."));
  }
  std::vector<absl::string_view> missing;
  const char* table = reinterpret_cast<const char*>(api);
  for (const RequiredFunction& function : kRequiredFunctionsV1_0) {
    void* pointer;
    std::memcpy(&pointer, table + function.offset, sizeof(pointer));
    if (pointer == nullptr) missing.push_back(function.name);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "driver '", api->driver_name, "' (", path,
        ") is missing required function", missing.size() > 1 ? "s" : "", " ",
        absl::StrJoin(missing, ", "),
        " of driver ABI 1.0. Every function of version 1.0 is required; see "
        "docs/driver_abi.md."));
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadedDriverLibrary> LoadDriverLibrary(const std::string& path) {
  // RTLD_LOCAL keeps the driver's symbols (and its copy of any library) out of
  // the global namespace, so two builds of a dependency cannot clash.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::InvalidArgumentError(absl::StrCat(
        "could not load openreg driver ", path,
        " as a shared library: ", error ? error : "unknown dlopen error",
        ". Expected a .so built against driver_abi/openreg_driver.h."));
  }
  auto close_on_error = [&](absl::Status status) {
    dlclose(handle);
    return status;
  };
  void* symbol = dlsym(handle, OPENREG_DRIVER_ENTRY_SYMBOL_NAME);
  if (symbol == nullptr) {
    return close_on_error(absl::InvalidArgumentError(absl::StrCat(
        "shared library ", path, " is not an openreg driver: it does not "
        "export the entry symbol ", OPENREG_DRIVER_ENTRY_SYMBOL_NAME,
        ". Define it with OPENREG_DRIVER_ENTRY_SYMBOL and default "
        "visibility.")));
  }
  auto get_api = reinterpret_cast<openreg_driver_get_api_fn>(symbol);
  const openreg_driver_api* api = nullptr;
  const openreg_status status = get_api(OPENREG_DRIVER_ABI_VERSION_MAJOR,
                                        OPENREG_DRIVER_ABI_VERSION_MINOR, &api);
  if (status != OPENREG_SUCCESS) {
    // Without a table there is no last_error_message to ask: name the status.
    return close_on_error(absl::FailedPreconditionError(absl::StrCat(
        "driver ", path, " refused to load: its ",
        OPENREG_DRIVER_ENTRY_SYMBOL_NAME, " returned ", DriverStatusName(status),
        " for core ABI version ", OPENREG_DRIVER_ABI_VERSION_MAJOR, ".",
        OPENREG_DRIVER_ABI_VERSION_MINOR,
        ". A driver must return its table for any version and let the core "
        "decide compatibility; see docs/driver_abi.md.")));
  }
  if (absl::Status valid = ValidateDriverApi(api, path); !valid.ok()) {
    return close_on_error(valid);
  }
  return LoadedDriverLibrary{handle, api, path};
}

void UnloadDriverLibrary(LoadedDriverLibrary& library) {
  if (library.handle != nullptr) dlclose(library.handle);
  library.handle = nullptr;
  library.api = nullptr;
}

}  // namespace openreg
