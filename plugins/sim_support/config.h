// Validation of the openreg_driver_config passed to context_create, shared by
// the simulated drivers. The options both drivers accept are parsed here: the
// fault_* ones (fault_injector.h) and retain_freed_memory (device_memory.h,
// Note [Retained execution pages]); the other options are each driver's own.
//
// Device count and memory size come only from the config: the core owns the
// user-facing knobs (environment variables) and hands the driver final
// values, so the simulated drivers never read the environment.
// Thread-safety: a pure function.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_CONFIG_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_CONFIG_H_

#include <cstdint>
#include <string>

#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/device_memory.h"
#include "plugins/sim_support/fault_injector.h"

namespace openreg::sim {

inline constexpr int32_t kDefaultDeviceCount = 2;
inline constexpr uint64_t kDefaultDeviceMemoryBytes = uint64_t{16} << 30;
// The simulated drivers' own limit (not the core's, which may be lower): it
// bounds the per-device bookkeeping a bad config can make context_create
// allocate.
inline constexpr int32_t kMaxSimDeviceCount = 1024;

struct SimConfig {
  int32_t device_count = kDefaultDeviceCount;
  uint64_t device_memory_bytes = kDefaultDeviceMemoryBytes;
  // The fault_* options; no point fails by default.
  FaultPlan faults;
  // retain_freed_memory: bytes of freed execution pages each device keeps.
  uint64_t retain_freed_bytes = kDefaultRetainFreedBytes;
  // The driver-specific "key=value,..." options: the config's options without
  // the shared keys ("" when there are none).
  std::string options;
};

// Reads `config` (NULL means all defaults) into `out`, honouring its
// struct_size. INVALID_ARGUMENT for a negative or too large device count, a
// struct_size too small to hold the first field, a bad fault_* option, or a
// bad or repeated retain_freed_memory.
openreg_status ParseConfig(const openreg_driver_config* config, SimConfig* out);

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_CONFIG_H_
