#include "plugins/sim_support/sim_state.h"

#include <memory>
#include <optional>

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {

namespace {

std::unique_ptr<FaultInjector> MakeInjector(const FaultPlan& faults) {
  for (openreg_status status : faults.status) {
    if (status != OPENREG_SUCCESS)
      return std::make_unique<FaultInjector>(faults);
  }
  return nullptr;
}

}  // namespace

SimState::SimState(const char* driver_name, int32_t device_count,
                   uint64_t device_memory_bytes, StreamPriorityRange priorities,
                   const FaultPlan& faults, uint64_t retain_freed_bytes)
    : driver_name_(driver_name),
      device_memory_bytes_(device_memory_bytes),
      priorities_(priorities),
      faults_(MakeInjector(faults)) {
  device_memory_.reserve(device_count);
  for (int32_t device = 0; device < device_count; ++device) {
    device_memory_.push_back(std::make_unique<DeviceMemory>(
        device, device_memory_bytes, retain_freed_bytes));
  }
}

SimState::~SimState() = default;

openreg_status SimState::CheckDevice(int32_t device,
                                     const char* function) const {
  if (device >= 0 && device < device_count()) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_INVALID_DEVICE,
              absl::StrFormat("%s: device %d does not exist; valid devices are "
                              "0 to %d (device_count is %d)",
                              function, device, device_count() - 1,
                              device_count()));
}

openreg_status SimState::CheckStreamPriority(int32_t device, int32_t priority,
                                             const char* function) const {
  if (priority >= priorities_.greatest && priority <= priorities_.least) {
    return OPENREG_SUCCESS;
  }
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("%s: priority %d is outside the valid range "
                              "[%d, %d] of device %d (lower is higher "
                              "priority, %d is the default)",
                              function, priority, priorities_.greatest,
                              priorities_.least, device, priorities_.least));
}

PointerInfo SimState::Classify(const void* ptr) const {
  for (int32_t device = 0; device < device_count(); ++device) {
    if (std::optional<Allocation> found = device_memory_[device]->Find(ptr)) {
      return PointerInfo{OPENREG_MEMORY_TYPE_DEVICE, device, *found};
    }
  }
  if (std::optional<Allocation> found = pinned_memory_.Find(ptr)) {
    return PointerInfo{OPENREG_MEMORY_TYPE_HOST, -1, *found};
  }
  return PointerInfo{};
}

void* SimState::ExecutionAddress(const void* ptr) const {
  for (const std::unique_ptr<DeviceMemory>& memory : device_memory_) {
    if (memory->InDeviceView(ptr)) {
      return const_cast<char*>(static_cast<const char*>(ptr)) +
             memory->execution_offset();
    }
  }
  return const_cast<void*>(ptr);
}

}  // namespace openreg::sim
