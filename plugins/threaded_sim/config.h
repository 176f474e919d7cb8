// Validation of the openreg_driver_config passed to init.
//
// Device count, memory size and options come only from the config: the core
// owns the user-facing knobs (environment variables) and hands the driver
// final values, so threaded_sim never reads the environment.
// Thread-safety: a pure function, called by init only.
#ifndef OPENREG_PLUGINS_THREADED_SIM_CONFIG_H_
#define OPENREG_PLUGINS_THREADED_SIM_CONFIG_H_

#include <cstdint>

#include "core/driver/openreg_driver.h"
#include "plugins/threaded_sim/options.h"

namespace openreg::threaded_sim {

inline constexpr int32_t kDefaultDeviceCount = 2;
inline constexpr uint64_t kDefaultDeviceMemoryBytes = uint64_t{16} << 30;
// Bounds the per-device bookkeeping a bad config can make init allocate.
inline constexpr int32_t kMaxDeviceCount = 1024;

struct DriverConfig {
  int32_t device_count = kDefaultDeviceCount;
  uint64_t device_memory_bytes = kDefaultDeviceMemoryBytes;
  DriverOptions options = DefaultOptions();
};

// Reads `config` (NULL means all defaults) into `out`, honouring its
// struct_size. INVALID_ARGUMENT for a negative or too large device count, a
// struct_size too small to hold the first field, or a bad option.
openreg_status ParseConfig(const openreg_driver_config* config,
                           DriverConfig* out);

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_CONFIG_H_
