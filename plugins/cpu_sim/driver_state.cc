#include "plugins/cpu_sim/driver_state.h"

#include <optional>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/const_init.h"
#include "absl/base/thread_annotations.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "plugins/sim_support/error.h"

namespace openreg::cpu_sim {

using sim::Allocation;
using sim::DeviceMemory;
using sim::Fail;

namespace {

ABSL_CONST_INIT absl::Mutex g_state_mu(absl::kConstInit);
// Destroyed when the library is unloaded, which frees the memory of a driver
// that was never shut down.
std::shared_ptr<DriverState> g_state ABSL_GUARDED_BY(g_state_mu);

}  // namespace

DriverState::DriverState(const DriverConfig& config)
    : device_memory_bytes_(config.device_memory_bytes) {
  devices_.reserve(config.device_count);
  for (int32_t device = 0; device < config.device_count; ++device) {
    devices_.push_back(
        std::make_unique<DeviceMemory>(device, config.device_memory_bytes));
  }
}

openreg_status DriverState::CheckDevice(int32_t device,
                                        const char* function) const {
  if (device >= 0 && device < device_count()) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_INVALID_DEVICE,
              absl::StrFormat("%s: device %d does not exist; valid devices are "
                              "0 to %d (device_count is %d)",
                              function, device, device_count() - 1,
                              device_count()));
}

PointerInfo DriverState::Classify(const void* ptr) const {
  for (int32_t device = 0; device < device_count(); ++device) {
    if (std::optional<Allocation> found = devices_[device]->Find(ptr)) {
      return PointerInfo{OPENREG_MEMORY_TYPE_DEVICE, device, *found};
    }
  }
  if (std::optional<Allocation> found = host_memory_.Find(ptr)) {
    return PointerInfo{OPENREG_MEMORY_TYPE_HOST, -1, *found};
  }
  return PointerInfo{};
}

openreg_status InstallState(std::shared_ptr<DriverState> state) {
  absl::MutexLock lock(&g_state_mu);
  if (g_state != nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "init: the driver is already initialized; call shutdown "
                "before initializing it again");
  }
  g_state = std::move(state);
  return OPENREG_SUCCESS;
}

std::shared_ptr<DriverState> ReleaseState() {
  absl::MutexLock lock(&g_state_mu);
  return std::exchange(g_state, nullptr);
}

std::shared_ptr<DriverState> AcquireState(const char* function) {
  std::shared_ptr<DriverState> state;
  {
    // Shared: calls only copy the pointer, so they need not serialize.
    absl::ReaderMutexLock lock(&g_state_mu);
    state = g_state;
  }
  if (state == nullptr) {
    Fail(OPENREG_ERROR_NOT_INITIALIZED,
         absl::StrFormat("%s: the driver is not initialized; call init first "
                         "(or again after shutdown)",
                         function));
  }
  return state;
}

}  // namespace openreg::cpu_sim
