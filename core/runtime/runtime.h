// The process-wide openreg runtime: the loaded driver and per-device state.
//
// Initialization is lazy: nothing touches a driver until the first call to
// Runtime::Get(), so `import torch` stays cheap. The first Get() reads the
// configuration, resolves and loads the driver and initializes it; a failure
// is remembered and returned by every later Get(), with the same message.
//
// Fork: a driver's threads and state do not survive fork(). A process forked
// after the runtime started is "in a bad fork": Get() fails there with an
// error that says to use the 'spawn' start method, as CUDA does.
//
// Lifetime: the runtime is created once and deliberately never destroyed.
// Tensors freed during interpreter shutdown still need the driver, and
// unloading a driver while its threads run is unsafe.
//
// Thread-safety: Get() is thread-safe; the returned Runtime is immutable
// except for members that document their own locking.
#ifndef OPENREG_CORE_RUNTIME_RUNTIME_H_
#define OPENREG_CORE_RUNTIME_RUNTIME_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/driver/driver.h"
#include "core/runtime/memory/caching_device_allocator.h"
#include "core/runtime/memory/pinned_memory_pool.h"
#include "core/runtime/runtime_config.h"
#include "core/runtime/stream_registry.h"

namespace openreg {

class Runtime {
 public:
  // Where the Python package keeps its bundled drivers; searched before
  // OPENREG_DRIVER_PATH. Must be called before the first Get().
  static void SetPackageDriverDirectory(std::string directory);

  // The driver search directories in lookup order.
  static std::vector<std::string> DriverSearchDirectories(
      const RuntimeConfig& config);

  static absl::StatusOr<Runtime*> Get();

  // The runtime if Get() has succeeded and this is not a bad fork, else
  // null; never initializes. Every op asks, several times: one atomic load,
  // where Get() also checks the fork flag and copies a StatusOr.
  static Runtime* IfStarted() {
    return started_.load(std::memory_order_acquire);
  }

  // Whether Get() has succeeded in this process. Never initializes; false in
  // a bad fork.
  static bool IsInitialized();

  // Whether this process was forked from one whose runtime had started.
  static bool InBadFork();

  const Driver& driver() const { return *driver_; }
  const RuntimeConfig& config() const { return config_; }
  int32_t device_count() const { return device_count_; }
  StreamRegistry& streams() { return streams_; }
  CachingDeviceAllocator& device_memory() { return device_memory_; }
  // What to add to a device address of `device` (a valid index) for code
  // running on the driver's threads to reach its bytes: the driver's
  // device_execution_offset, asked once at start-up (0 when device memory is
  // host-accessible). Every host-side alias of device memory that such code
  // uses is made at device address + this offset.
  intptr_t execution_offset(int32_t device) const {
    return execution_offsets_[device];
  }
  const std::vector<intptr_t>& execution_offsets() const {
    return execution_offsets_;
  }
  PinnedMemoryPool& pinned_memory() { return pinned_memory_; }

  // OK for an index in [0, device_count), else an error naming the valid
  // range and how to get more devices.
  absl::Status CheckDevice(int64_t device) const;

  // Whether `device` has been used (a primary context, in CUDA's terms).
  bool HasPrimaryContext(int32_t device) const;
  void MarkDeviceUsed(int32_t device);

 private:
  Runtime(RuntimeConfig config, std::unique_ptr<Driver> driver,
          int32_t device_count, std::vector<intptr_t> execution_offsets);

  static absl::StatusOr<Runtime*> Create();
  // The pthread_atfork child handler.
  static void MarkChildAsBadFork();

  const RuntimeConfig config_;
  const std::unique_ptr<Driver> driver_;
  const int32_t device_count_;
  const std::vector<intptr_t> execution_offsets_;  // by device
  StreamRegistry streams_;
  CachingDeviceAllocator device_memory_;
  PinnedMemoryPool pinned_memory_;
  std::unique_ptr<std::atomic<bool>[]> device_used_;
  // Set once Create() succeeds; cleared in a forked child.
  static inline std::atomic<Runtime*> started_{nullptr};
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_RUNTIME_H_
