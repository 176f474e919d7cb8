// Pinned host memory: what host_malloc hands out. Nothing in the simulated
// drivers does DMA, so the memory is ordinary page-aligned memory; it is
// tracked so pointer_get_attributes can report it as OPENREG_MEMORY_TYPE_HOST
// and, in threaded_sim, so copies can tell it from pageable host memory
// (copies between pinned and device memory are fully asynchronous there; see
// plugins/threaded_sim/api_copy.cc).
//
// Ownership: owns every allocation until Free() or destruction.
// Thread-safety: all members may be called concurrently; mu_ guards the
// allocation table.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_PINNED_HOST_MEMORY_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_PINNED_HOST_MEMORY_H_

#include <cstddef>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/allocation_table.h"

namespace openreg::sim {

// Page alignment, as real page-locked allocations have.
inline constexpr size_t kPinnedHostMemoryAlignment = 4096;

class PinnedHostMemory {
 public:
  PinnedHostMemory() = default;

  PinnedHostMemory(const PinnedHostMemory&) = delete;
  PinnedHostMemory& operator=(const PinnedHostMemory&) = delete;

  // host_malloc for a non-zero `size`.
  openreg_status Allocate(size_t size, void** ptr);

  // host_free for a non-NULL `ptr`: INVALID_ARGUMENT unless `ptr` is the base
  // of a live pinned allocation.
  openreg_status Free(void* ptr);

  // The live pinned allocation that contains `ptr`, if any.
  std::optional<Allocation> Find(const void* ptr) const;

 private:
  mutable absl::Mutex mu_;
  AllocationTable table_ ABSL_GUARDED_BY(mu_){kPinnedHostMemoryAlignment};
};

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_PINNED_HOST_MEMORY_H_
