#include "core/driver/driver_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/driver/driver_status.h"
#include "core/driver/v1_adapter.h"
#include "driver_abi/openreg_driver_v1.h"

namespace openreg {
namespace {

// A function of a table, with its offset, so validation can name a missing
// one.
struct TableFunction {
  const char* name;
  size_t offset;
  uint32_t minor;  // the minor version that added it; 0: required
};

// Every function of ABI 2.x, generated from the ABI's one list.
#define OPENREG_TABLE_FUNCTION(minor, return_type, name, params) \
  TableFunction{#name, offsetof(openreg_driver_api, name), minor},
constexpr TableFunction kFunctionsV2[] = {
    OPENREG_DRIVER_FUNCTIONS(OPENREG_TABLE_FUNCTION)};
#undef OPENREG_TABLE_FUNCTION

// The functions of ABI 1.0, all required (1.1's stream_get_priority is
// optional, so it is not listed). Major 1 is frozen (openreg_driver_v1.h
// has no function list), so neither is this.
#define OPENREG_V1_FUNCTION(field) \
  TableFunction{#field, offsetof(openreg_driver_api_v1, field), 0}
constexpr TableFunction kFunctionsV1[] = {
    OPENREG_V1_FUNCTION(init),
    OPENREG_V1_FUNCTION(shutdown),
    OPENREG_V1_FUNCTION(last_error_message),
    OPENREG_V1_FUNCTION(get_device_count),
    OPENREG_V1_FUNCTION(get_device_properties),
    OPENREG_V1_FUNCTION(device_malloc),
    OPENREG_V1_FUNCTION(device_free),
    OPENREG_V1_FUNCTION(host_malloc),
    OPENREG_V1_FUNCTION(host_free),
    OPENREG_V1_FUNCTION(pointer_get_attributes),
    OPENREG_V1_FUNCTION(mem_get_info),
    OPENREG_V1_FUNCTION(memcpy_async),
    OPENREG_V1_FUNCTION(memset_async),
    OPENREG_V1_FUNCTION(stream_create),
    OPENREG_V1_FUNCTION(stream_destroy),
    OPENREG_V1_FUNCTION(stream_query),
    OPENREG_V1_FUNCTION(stream_synchronize),
    OPENREG_V1_FUNCTION(stream_wait_event),
    OPENREG_V1_FUNCTION(event_create),
    OPENREG_V1_FUNCTION(event_destroy),
    OPENREG_V1_FUNCTION(event_record),
    OPENREG_V1_FUNCTION(event_query),
    OPENREG_V1_FUNCTION(event_synchronize),
    OPENREG_V1_FUNCTION(event_elapsed_time),
    OPENREG_V1_FUNCTION(launch_host_func),
    OPENREG_V1_FUNCTION(device_synchronize),
};
#undef OPENREG_V1_FUNCTION

// The rules of one major version: the table size of each of its minor
// versions (by minor) and its functions. A table must be at least as large
// as the minor version it reports (capped at the newest this core knows): a
// driver that bumps abi_version_minor without appending the new fields would
// otherwise claim functions it does not have.
struct MajorVersion {
  uint32_t major;
  const size_t* table_sizes;
  size_t minor_count;
  const TableFunction* functions;
  size_t function_count;
};

constexpr size_t kTableSizesV2[] = {OPENREG_DRIVER_API_STRUCT_SIZE_V2_0,
                                    OPENREG_DRIVER_API_STRUCT_SIZE_V2_1,
                                    OPENREG_DRIVER_API_STRUCT_SIZE_V2_2};
static_assert(std::size(kTableSizesV2) == OPENREG_DRIVER_ABI_VERSION_MINOR + 1,
              "add the table size of the new minor version");
constexpr size_t kTableSizesV1[] = {OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0,
                                    OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_1};
static_assert(std::size(kTableSizesV1) ==
              OPENREG_DRIVER_ABI_V1_VERSION_MINOR + 1);

constexpr MajorVersion kMajorVersions[] = {
    {OPENREG_DRIVER_ABI_VERSION_MAJOR, kTableSizesV2, std::size(kTableSizesV2),
     kFunctionsV2, std::size(kFunctionsV2)},
    {1, kTableSizesV1, std::size(kTableSizesV1), kFunctionsV1,
     std::size(kFunctionsV1)},
};

bool IsSaneString(const char* text) {
  if (text == nullptr || *text == '\0') return false;
  for (const char* c = text; *c != '\0'; ++c) {
    if (c - text >= 256 || !std::isprint(static_cast<unsigned char>(*c))) {
      return false;
    }
  }
  return true;
}

absl::Status ValidateTable(const openreg_driver_api_prefix& api,
                           const MajorVersion& version,
                           absl::string_view path) {
  const uint32_t major = version.major;
  if (api.struct_size < version.table_sizes[0]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "driver ", path, " reports a function table of ", api.struct_size,
        " bytes; ABI version ", major, ".0 requires at least ",
        version.table_sizes[0], " bytes. Set struct_size = sizeof(",
        major == 1 ? "openreg_driver_api_v1" : "openreg_driver_api", ")."));
  }
  const uint32_t known_minor = std::min<uint32_t>(
      api.abi_version_minor, static_cast<uint32_t>(version.minor_count - 1));
  if (api.struct_size < version.table_sizes[known_minor]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "driver ", path, " reports ABI version ", major, ".",
        api.abi_version_minor, " but a function table of ", api.struct_size,
        " bytes; ABI version ", major, ".", known_minor, " has a table of ",
        version.table_sizes[known_minor],
        " bytes. Set struct_size to that "
        "version's size and fill its functions, or report the minor version "
        "whose table you fill."));
  }
  if (!IsSaneString(api.driver_name) || !IsSaneString(api.driver_version)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "driver ", path,
        " must set driver_name and driver_version to non-empty printable "
        "strings of at most 256 characters."));
  }
  std::vector<absl::string_view> missing;
  const char* table = reinterpret_cast<const char*>(&api);
  for (size_t i = 0; i < version.function_count; ++i) {
    const TableFunction& function = version.functions[i];
    if (function.minor != 0) continue;
    void* pointer;
    std::memcpy(&pointer, table + function.offset, sizeof(pointer));
    if (pointer == nullptr) missing.push_back(function.name);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "driver '", api.driver_name, "' (", path,
        ") is missing required function", missing.size() > 1 ? "s" : "", " ",
        absl::StrJoin(missing, ", "), " of driver ABI ", major,
        ".0. Every function of version ", major,
        ".0 is required; see docs/driver_abi.md."));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateDriverApi(const openreg_driver_api_prefix* api,
                               absl::string_view path) {
  if (api == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("driver ", path, ": ", OPENREG_DRIVER_ENTRY_SYMBOL_NAME,
                     " returned success but no function table."));
  }
  // The version fields sit right after struct_size in every major version;
  // a table too small to hold them cannot be read at all.
  if (api->struct_size < offsetof(openreg_driver_api_prefix, driver_name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "driver ", path, " reports a function table of only ", api->struct_size,
        " bytes, too small to hold its ABI version. Set struct_size = "
        "sizeof(openreg_driver_api)."));
  }
  for (const MajorVersion& version : kMajorVersions) {
    if (api->abi_version_major == version.major) {
      return ValidateTable(*api, version, path);
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "driver ", path, " implements driver ABI version ",
      api->abi_version_major, ".", api->abi_version_minor,
      ", but this openreg core implements ABI version ",
      OPENREG_DRIVER_ABI_VERSION_MAJOR, ".", OPENREG_DRIVER_ABI_VERSION_MINOR,
      " (and runs drivers of ABI 1.x through an adapter). Rebuild the driver "
      "against this core's driver_abi/openreg_driver.h."));
}

absl::StatusOr<std::shared_ptr<const DriverLibrary>> DriverLibrary::Load(
    const std::string& path) {
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
    return close_on_error(absl::InvalidArgumentError(
        absl::StrCat("shared library ", path,
                     " is not an openreg driver: it does not "
                     "export the entry symbol ",
                     OPENREG_DRIVER_ENTRY_SYMBOL_NAME,
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
        OPENREG_DRIVER_ENTRY_SYMBOL_NAME, " returned ",
        DriverStatusName(status), " for core ABI version ",
        OPENREG_DRIVER_ABI_VERSION_MAJOR, ".", OPENREG_DRIVER_ABI_VERSION_MINOR,
        ". A driver must return its table for any version and let the core "
        "decide compatibility; see docs/driver_abi.md.")));
  }
  // Every major's table starts with the prefix: read the version through it
  // before deciding which table it is.
  const auto* prefix = reinterpret_cast<const openreg_driver_api_prefix*>(api);
  if (absl::Status valid = ValidateDriverApi(prefix, path); !valid.ok()) {
    return close_on_error(valid);
  }
  return std::shared_ptr<const DriverLibrary>(
      new DriverLibrary(handle, path, *prefix));
}

DriverLibrary::DriverLibrary(void* handle, std::string path,
                             const openreg_driver_api_prefix& prefix)
    : handle_(handle),
      path_(std::move(path)),
      name_(prefix.driver_name),
      version_(prefix.driver_version),
      abi_version_major_(prefix.abi_version_major),
      abi_version_minor_(prefix.abi_version_minor) {
  if (abi_version_major_ == 1) {
    adapter_ = std::make_unique<V1Adapter>(
        reinterpret_cast<const openreg_driver_api_v1&>(prefix));
    api_ = &adapter_->api();
  } else {
    api_ = reinterpret_cast<const openreg_driver_api*>(&prefix);
  }
}

DriverLibrary::~DriverLibrary() {
  adapter_.reset();
  dlclose(handle_);
}

openreg_status DriverLibrary::CreateContext(const openreg_driver_config* config,
                                            openreg_context* context) const {
  if (adapter_ != nullptr) return adapter_->CreateContext(config, context);
  return api_->context_create(config, context);
}

}  // namespace openreg
