// The driver-specific options: the `options` string of the config passed to
// context_create, "key=value" pairs separated by commas (the core fills it
// from OPENREG_DRIVER_OPTIONS), without the fault_* keys, which
// plugins/sim_support/config.h has taken out. README.md documents every key;
// the table in options.cc is the one list of them, so error messages and
// parsing cannot disagree. Each context has its own options.
// Thread-safety: pure functions over constant tables.
#ifndef OPENREG_PLUGINS_THREADED_SIM_OPTIONS_H_
#define OPENREG_PLUGINS_THREADED_SIM_OPTIONS_H_

#include <cstdint>

#include "driver_abi/openreg_driver.h"

namespace openreg::threaded_sim {

inline constexpr int32_t kMaxExecutionSlots = 1024;
inline constexpr int64_t kDefaultAdversarialMaxDelayMicros = 1000;
inline constexpr int64_t kMaxAdversarialMaxDelayMicros = 1000000;
inline constexpr int64_t kDefaultIdleReleaseMillis = 50;
inline constexpr int64_t kMaxIdleReleaseMillis = 3600000;
inline constexpr int64_t kDefaultQueueDepth = 256;
inline constexpr int64_t kMaxQueueDepth = 1 << 20;

struct DriverOptions {
  // How many work items of one device may run at the same time (see
  // execution_slots.h). Defaults to the number of hardware threads.
  int32_t execution_slots = 1;
  // When set, every work item waits a pseudo-random time in
  // [0, adversarial_max_delay_us] before it runs (see adversarial_delay.h).
  bool adversarial = false;
  uint64_t adversarial_seed = 0;
  int64_t adversarial_max_delay_us = kDefaultAdversarialMaxDelayMicros;
  // How long a stream's worker waits, idle, before it gives back the OpenMP
  // worker threads its host functions left it owning (see
  // third_party/openmp/thread_workers.h); 0 never does.
  int64_t idle_release_ms = kDefaultIdleReleaseMillis;
  // How many items a stream holds, queued or running, before an enqueue from
  // a user thread waits for room (Note [Queue depth] in stream.h).
  int64_t queue_depth = kDefaultQueueDepth;
};

// The options an empty string selects.
DriverOptions DefaultOptions();

// Parses `options` (NULL or "" means all defaults) into `out`.
// INVALID_ARGUMENT, naming the key and what it accepts, for an unknown or
// repeated key, an item without '=', or a value out of range.
openreg_status ParseOptions(const char* options, DriverOptions* out);

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_OPTIONS_H_
