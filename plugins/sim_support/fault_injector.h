// Note [Injected faults]
// Seeded fault injection for the simulated drivers, so the core's handling of
// failing drivers can be tested (docs/fault_injection.md). Configured by the
// fault_* keys of the driver options (OPENREG_DRIVER_OPTIONS), which both
// drivers accept alike:
//   fault_points=device_malloc+memcpy_async:INTERNAL+...  which entry points
//       fail, each optionally with the status to fail with (default:
//       OUT_OF_MEMORY for allocations, LAUNCH_FAILURE for the rest);
//   fault_rate=0.01   the probability that one call of a listed point fails;
//   fault_on_call=N   or: only the N-th call of each listed point fails;
//   fault_seed=S      the seed of the rate's draws.
// Whether call n of a point fails depends only on (seed, point, n), never on
// timing, so a run with the same calls in the same order fails the same way.
// An injected fault fails the call as a real failure would and does nothing
// else: on both drivers the entry point returns the status, after its
// arguments were checked (a bad call still gets the error that says so) and
// before any work is done or enqueued, so a refused launch never runs its
// host function and the caller keeps what it passed (SimState::InjectFault).
//
// Thread-safety: FaultInjector's counters are atomic; every method may be
// called from any thread. ParseFaultOptions is a pure function.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_FAULT_INJECTOR_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_FAULT_INJECTOR_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "driver_abi/openreg_driver.h"

namespace openreg::sim {

enum class FaultPoint : int {
  kDeviceMalloc,
  kHostMalloc,
  kMemcpyAsync,
  kMemsetAsync,
  kLaunchHostFunc,
  kEventRecord,
};
inline constexpr int kFaultPointCount = 6;

// The ABI name of `point`, e.g. "device_malloc".
const char* FaultPointName(FaultPoint point);

struct FaultPlan {
  // OPENREG_SUCCESS for a point that never fails.
  std::array<openreg_status, kFaultPointCount> status{};
  double rate = 0;
  uint64_t on_call = 0;  // 0: use `rate`
  uint64_t seed = 0;
};

// Reads the fault_* keys of `options` (NULL or "" means none) into `plan` and
// copies every other "key=value" item to `rest`, for the driver's own parser.
// INVALID_ARGUMENT, saying what is expected, for an unknown entry point or
// status, a rate outside [0, 1], a repeated fault key, both fault_rate and
// fault_on_call, or a rate or call without fault_points.
openreg_status ParseFaultOptions(const char* options, FaultPlan* plan,
                                 std::string* rest);

class FaultInjector {
 public:
  explicit FaultInjector(const FaultPlan& plan) : plan_(plan) {}

  // Counts one call of `point` by `function`; returns OPENREG_SUCCESS, or
  // the status this call must fail with, its message already set (Fail()).
  openreg_status MaybeFail(FaultPoint point, const char* function);

  // How many faults were injected at `point` so far.
  uint64_t injected(FaultPoint point) const {
    return injected_[static_cast<int>(point)].load();
  }

 private:
  const FaultPlan plan_;
  std::array<std::atomic<uint64_t>, kFaultPointCount> calls_{};
  std::array<std::atomic<uint64_t>, kFaultPointCount> injected_{};
};

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_FAULT_INJECTOR_H_
