#include <memory>

#include "absl/strings/str_format.h"
#include "plugins/cpu_sim/api.h"
#include "plugins/cpu_sim/driver_state.h"
#include "plugins/sim_support/error.h"

namespace openreg::cpu_sim {

using sim::DeviceMemory;
using sim::Fail;

using sim::RequireNonNull;

openreg_status DeviceMalloc(int32_t device, size_t size, void** ptr) {
  std::shared_ptr<DriverState> state = AcquireState("device_malloc");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, "device_malloc"));
  SIM_RETURN_IF_ERROR(RequireNonNull(ptr, "device_malloc", "ptr"));
  if (size == 0) {
    *ptr = nullptr;
    return OPENREG_SUCCESS;
  }
  return state->device_memory(device).Allocate(size, ptr);
}

openreg_status DeviceFree(int32_t device, void* ptr) {
  std::shared_ptr<DriverState> state = AcquireState("device_free");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, "device_free"));
  if (ptr == nullptr) return OPENREG_SUCCESS;
  return state->device_memory(device).Free(ptr);
}

openreg_status HostMalloc(size_t size, void** ptr) {
  std::shared_ptr<DriverState> state = AcquireState("host_malloc");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  SIM_RETURN_IF_ERROR(RequireNonNull(ptr, "host_malloc", "ptr"));
  // Mirrors device_malloc, which the ABI defines to give NULL for size 0.
  if (size == 0) {
    *ptr = nullptr;
    return OPENREG_SUCCESS;
  }
  return state->host_memory().Allocate(size, ptr);
}

openreg_status HostFree(void* ptr) {
  std::shared_ptr<DriverState> state = AcquireState("host_free");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  if (ptr == nullptr) return OPENREG_SUCCESS;
  return state->host_memory().Free(ptr);
}

openreg_status PointerGetAttributes(const void* ptr,
                                    openreg_pointer_attributes* attributes) {
  std::shared_ptr<DriverState> state = AcquireState("pointer_get_attributes");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  return sim::WritePointerAttributes(state->Classify(ptr), attributes);
}

openreg_status MemGetInfo(int32_t device, uint64_t* free_bytes,
                          uint64_t* total_bytes) {
  std::shared_ptr<DriverState> state = AcquireState("mem_get_info");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, "mem_get_info"));
  SIM_RETURN_IF_ERROR(
      RequireNonNull(free_bytes, "mem_get_info", "free_bytes"));
  SIM_RETURN_IF_ERROR(
      RequireNonNull(total_bytes, "mem_get_info", "total_bytes"));
  const DeviceMemory& memory = state->device_memory(device);
  *total_bytes = memory.capacity_bytes();
  *free_bytes = memory.capacity_bytes() - memory.bytes_in_use();
  return OPENREG_SUCCESS;
}

}  // namespace openreg::cpu_sim
