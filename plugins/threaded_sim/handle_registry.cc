#include "plugins/threaded_sim/handle_registry.h"

#include <atomic>

namespace openreg::threaded_sim {

uintptr_t NextHandleId() {
  // Starts at 1 so no handle is NULL; 64 bits never wrap in practice.
  static std::atomic<uintptr_t> next_id{1};
  return next_id.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace openreg::threaded_sim
