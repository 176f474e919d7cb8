// The memory of one simulated device: host memory handed out through an
// AllocationTable, with a fixed capacity that allocations may not exceed.
//
// Ownership: owns every allocation made on it until Free() or destruction.
// Thread-safety: all members may be called concurrently; mu_ guards the
// allocation table (and with it the bytes in use). Errors are reported with
// Fail(), so members are meant for API-call threads: threaded_sim's worker
// threads touch only the memory itself, whose lifetime the caller guarantees
// (device_free only after the work using it finished).
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_DEVICE_MEMORY_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_DEVICE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/allocation_table.h"

namespace openreg::sim {

// The ABI requires device memory aligned to at least 256 bytes.
inline constexpr size_t kDeviceMemoryAlignment = 256;

class DeviceMemory {
 public:
  DeviceMemory(int32_t device, uint64_t capacity_bytes);

  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // device_malloc for a non-zero `size`: OUT_OF_MEMORY past the capacity.
  openreg_status Allocate(size_t size, void** ptr);

  // device_free for a non-NULL `ptr`: INVALID_ARGUMENT unless `ptr` is the
  // base of a live allocation of this device.
  openreg_status Free(void* ptr);

  // The live allocation of this device that contains `ptr`, if any.
  std::optional<Allocation> Find(const void* ptr) const;

  uint64_t bytes_in_use() const;
  uint64_t capacity_bytes() const { return capacity_bytes_; }

 private:
  const int32_t device_;
  const uint64_t capacity_bytes_;
  mutable absl::Mutex mu_;
  AllocationTable table_ ABSL_GUARDED_BY(mu_){kDeviceMemoryAlignment};
};

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_DEVICE_MEMORY_H_
