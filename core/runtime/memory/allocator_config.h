// Settings of the device caching allocator, from OPENREG_ALLOC_CONF.
//
// The variable holds comma-separated `key:value` pairs, in the spirit of
// PYTORCH_CUDA_ALLOC_CONF:
//   max_split_size_mb:N   requests of N MiB or more take a cached block
//                         whole, and smaller requests never take blocks of
//                         N MiB or more: big blocks stay whole for big
//                         requests, which bounds fragmentation. N > 20 (the size of the
//                         shared large segments); unset means no limit.
//   release_on_oom:B      (true|false, default true) before raising out of
//                         memory, return every unused cached segment to the
//                         driver and retry once.
// docs/memory.md explains the allocator these tune.
#ifndef OPENREG_CORE_RUNTIME_MEMORY_ALLOCATOR_CONFIG_H_
#define OPENREG_CORE_RUNTIME_MEMORY_ALLOCATOR_CONFIG_H_

#include <cstddef>
#include <limits>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace openreg {

struct AllocatorConfig {
  // No limit unless configured.
  size_t max_split_size = std::numeric_limits<size_t>::max();
  bool release_on_oom = true;

  bool has_max_split_size() const {
    return max_split_size != std::numeric_limits<size_t>::max();
  }
};

// Parses the value of OPENREG_ALLOC_CONF. An error's message says what is
// expected, the accepted keys and what is wrong with the offending entry;
// the caller names the variable.
absl::StatusOr<AllocatorConfig> ParseAllocatorConfig(absl::string_view text);

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_ALLOCATOR_CONFIG_H_
