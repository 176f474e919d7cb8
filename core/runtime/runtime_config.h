// The runtime's configuration, read once from OPENREG_* environment variables.
//
// Every variable is validated here, with an error that names the variable,
// what was expected, what was found and how to fix it, so a typo never turns
// into a strange failure later. docs/configuration.md lists them all.
#ifndef OPENREG_CORE_RUNTIME_RUNTIME_CONFIG_H_
#define OPENREG_CORE_RUNTIME_RUNTIME_CONFIG_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/runtime/memory/allocator_config.h"

namespace openreg {

inline constexpr int32_t kDefaultDeviceCount = 2;
// Device indices travel as c10::DeviceIndex (int8_t).
inline constexpr int32_t kMaxDeviceCount = 64;

struct RuntimeConfig {
  std::string driver_spec;                       // OPENREG_DRIVER
  std::vector<std::string> extra_driver_dirs;    // OPENREG_DRIVER_PATH
  int32_t device_count = kDefaultDeviceCount;    // OPENREG_DEVICE_COUNT
  uint64_t device_memory_bytes = 0;              // OPENREG_DEVICE_MEMORY, 0: driver default
  std::string driver_options;                    // OPENREG_DRIVER_OPTIONS, passed to init
  AllocatorConfig allocator;                     // OPENREG_ALLOC_CONF
  bool driver_validation = false;                // OPENREG_DRIVER_VALIDATION
  bool launch_blocking = false;                  // OPENREG_LAUNCH_BLOCKING
};

// Parses sizes such as "1048576", "512MiB", "2GiB", "1.5GB" (binary and
// decimal suffixes B, KB/KiB, MB/MiB, GB/GiB, TB/TiB; case-insensitive).
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);

using EnvironmentLookup =
    std::function<std::optional<std::string>(const char* name)>;

// Reads the process environment.
std::optional<std::string> GetEnvironmentVariable(const char* name);

absl::StatusOr<RuntimeConfig> RuntimeConfigFromEnvironment(
    const EnvironmentLookup& lookup = GetEnvironmentVariable);

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_RUNTIME_CONFIG_H_
