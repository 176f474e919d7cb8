// What both simulated drivers own and check in the same way, for one context:
// the devices (their count, memory and stream priority range) and the pinned
// host memory. Each driver's DriverState derives from SimState and adds what
// differs: its streams, events and, for threaded_sim, worker threads. The
// context registry (context_registry.h) holds every live state; the ABI
// functions of shared_api.h work on the SimState of the context they get.
//
// Ownership: owns every device and pinned allocation until it is freed or the
// state is destroyed (which is how context_destroy releases memory the core
// never freed). A derived state's own members are destroyed first, so work that
// still uses device memory while they shut down finds it.
// Also owns the context's fault injector, when its options ask for faults,
// and its activity recorder.
// Thread-safety: members are set at construction and never reassigned; each
// memory has its own mutex and the injector's counters are atomic, so every
// method may be called concurrently.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_SIM_STATE_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_SIM_STATE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/optimization.h"
#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/activity_recorder.h"
#include "plugins/sim_support/device_memory.h"
#include "plugins/sim_support/fault_injector.h"
#include "plugins/sim_support/pinned_host_memory.h"
#include "plugins/sim_support/pointer_attributes.h"

namespace openreg::sim {

// Stream priorities follow CUDA: lower is higher priority, and `least` is the
// default.
struct StreamPriorityRange {
  int32_t least;
  int32_t greatest;
};

class SimState {
 public:
  // `driver_name` (a string literal) names the devices. `faults` says which
  // calls fail (Note [Injected faults]); by default none. Each device keeps
  // up to `retain_freed_bytes` of freed execution pages (Note [Retained
  // execution pages] in device_memory.h).
  SimState(const char* driver_name, int32_t device_count,
           uint64_t device_memory_bytes, StreamPriorityRange priorities,
           const FaultPlan& faults = FaultPlan{},
           uint64_t retain_freed_bytes = kDefaultRetainFreedBytes);
  virtual ~SimState();

  SimState(const SimState&) = delete;
  SimState& operator=(const SimState&) = delete;

  const char* driver_name() const { return driver_name_; }
  int32_t device_count() const {
    return static_cast<int32_t>(device_memory_.size());
  }
  uint64_t device_memory_bytes() const { return device_memory_bytes_; }
  StreamPriorityRange stream_priorities() const { return priorities_; }
  // How many streams of `device` can run work at the same time.
  virtual int32_t concurrent_streams(int32_t device) const = 0;

  // INVALID_DEVICE, with the valid range in the message, unless `device`
  // exists. `function` names the API call being served.
  openreg_status CheckDevice(int32_t device, const char* function) const;
  // stream_create: INVALID_ARGUMENT unless `priority` is in the range.
  openreg_status CheckStreamPriority(int32_t device, int32_t priority,
                                     const char* function) const;

  // Callers pass a device index that CheckDevice accepted.
  DeviceMemory& device_memory(int32_t device) {
    return *device_memory_[device];
  }
  const DeviceMemory& device_memory(int32_t device) const {
    return *device_memory_[device];
  }
  PinnedHostMemory& pinned_memory() { return pinned_memory_; }
  const PinnedHostMemory& pinned_memory() const { return pinned_memory_; }

  // Where `ptr` points: into a device allocation, a pinned host allocation,
  // or neither.
  PointerInfo Classify(const void* ptr) const;

  // Called by each entry point fault_points can name, once its arguments
  // are valid and before it does anything: OPENREG_SUCCESS, or the status
  // this call must fail with, its message set (Note [Injected faults]).
  // Without fault options this is one well-predicted branch.
  openreg_status InjectFault(FaultPoint point, const char* function) {
    if (ABSL_PREDICT_TRUE(faults_ == nullptr)) return OPENREG_SUCCESS;
    return faults_->MaybeFail(point, function);
  }
  // The injector, or NULL when no fault options were given.
  const FaultInjector* faults() const { return faults_.get(); }
  // Where the driver's threads reach the bytes at device address `ptr`
  // (Note [Device view and execution view] in device_memory.h); `ptr` must
  // be inside a device allocation, as the copy checks make sure.
  void* ExecutionAddress(const void* ptr) const;
  // The context's activity recording (ABI 2.2).
  ActivityRecorder& activity() { return activity_; }

 private:
  const char* const driver_name_;
  const uint64_t device_memory_bytes_;
  const StreamPriorityRange priorities_;
  std::vector<std::unique_ptr<DeviceMemory>> device_memory_;
  PinnedHostMemory pinned_memory_;
  // NULL unless fault_points names some entry point.
  const std::unique_ptr<FaultInjector> faults_;
  ActivityRecorder activity_;
};

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_SIM_STATE_H_
