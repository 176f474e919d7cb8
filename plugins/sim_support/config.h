// Validation of the openreg_driver_config passed to init, shared by the
// simulated drivers; the options string is each driver's own to parse.
//
// Device count and memory size come only from the config: the core owns the
// user-facing knobs (environment variables) and hands the driver final
// values, so the simulated drivers never read the environment.
// Thread-safety: a pure function, called by init only.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_CONFIG_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_CONFIG_H_

#include <cstdint>

#include "driver_abi/openreg_driver.h"

namespace openreg::sim {

inline constexpr int32_t kDefaultDeviceCount = 2;
inline constexpr uint64_t kDefaultDeviceMemoryBytes = uint64_t{16} << 30;
// Bounds the per-device bookkeeping a bad config can make init allocate.
inline constexpr int32_t kMaxDeviceCount = 1024;

struct SimConfig {
  int32_t device_count = kDefaultDeviceCount;
  uint64_t device_memory_bytes = kDefaultDeviceMemoryBytes;
  // The driver-specific "key=value,..." options, or NULL; borrowed from the
  // config for the duration of init.
  const char* options = nullptr;
};

// Reads `config` (NULL means all defaults) into `out`, honouring its
// struct_size. INVALID_ARGUMENT for a negative or too large device count or a
// struct_size too small to hold the first field.
openreg_status ParseConfig(const openreg_driver_config* config, SimConfig* out);

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_CONFIG_H_
