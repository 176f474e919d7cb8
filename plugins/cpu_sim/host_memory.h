// Pinned host memory. Nothing in cpu_sim does DMA, so "pinned" memory is
// ordinary page-aligned memory; it is tracked only so pointer_get_attributes
// can report it as OPENREG_MEMORY_TYPE_HOST.
//
// Ownership: owns every allocation until Free() or destruction.
// Thread-safety: all members may be called concurrently; mu_ guards the
// allocation table.
#ifndef OPENREG_PLUGINS_CPU_SIM_HOST_MEMORY_H_
#define OPENREG_PLUGINS_CPU_SIM_HOST_MEMORY_H_

#include <cstddef>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "core/driver/openreg_driver.h"
#include "plugins/cpu_sim/allocation_table.h"

namespace openreg::cpu_sim {

// Page alignment, as real page-locked allocations have.
inline constexpr size_t kHostMemoryAlignment = 4096;

class HostMemory {
 public:
  HostMemory() = default;

  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;

  // host_malloc for a non-zero `size`.
  openreg_status Allocate(size_t size, void** ptr);

  // host_free for a non-NULL `ptr`: INVALID_ARGUMENT unless `ptr` is the base
  // of a live pinned allocation.
  openreg_status Free(void* ptr);

  // The live pinned allocation that contains `ptr`, if any.
  std::optional<Allocation> Find(const void* ptr) const;

 private:
  mutable absl::Mutex mu_;
  AllocationTable table_ ABSL_GUARDED_BY(mu_){kHostMemoryAlignment};
};

}  // namespace openreg::cpu_sim

#endif  // OPENREG_PLUGINS_CPU_SIM_HOST_MEMORY_H_
