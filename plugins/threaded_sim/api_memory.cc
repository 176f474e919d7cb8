#include <memory>

#include "absl/strings/str_format.h"
#include "plugins/threaded_sim/api.h"
#include "plugins/threaded_sim/driver_state.h"
#include "plugins/sim_support/error.h"
#include "plugins/threaded_sim/global_state.h"
#include "plugins/threaded_sim/struct_size.h"

namespace openreg::threaded_sim {

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
  return state->device(device).memory().Allocate(size, ptr);
}

openreg_status DeviceFree(int32_t device, void* ptr) {
  std::shared_ptr<DriverState> state = AcquireState("device_free");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, "device_free"));
  if (ptr == nullptr) return OPENREG_SUCCESS;
  return state->device(device).memory().Free(ptr);
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
  return state->pinned_memory().Allocate(size, ptr);
}

openreg_status HostFree(void* ptr) {
  std::shared_ptr<DriverState> state = AcquireState("host_free");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  if (ptr == nullptr) return OPENREG_SUCCESS;
  return state->pinned_memory().Free(ptr);
}

openreg_status PointerGetAttributes(const void* ptr,
                                    openreg_pointer_attributes* attributes) {
  constexpr const char* kFunction = "pointer_get_attributes";
  std::shared_ptr<DriverState> state = AcquireState(kFunction);
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  SIM_RETURN_IF_ERROR(
      RequireNonNull(attributes, kFunction, "attributes"));
  if (!THREADED_SIM_HAS_FIELD(openreg_pointer_attributes, attributes,
                              memory_type)) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: attributes->struct_size is %u, too small "
                                "for any v1.0 field (at least %u); set it to "
                                "OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0 "
                                "(%u) or sizeof(openreg_pointer_attributes)",
                                kFunction, attributes->struct_size,
                                OPENREG_STRUCT_SIZE(openreg_pointer_attributes,
                                                    memory_type),
                                OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0));
  }
  const PointerInfo info = state->Classify(ptr);
  attributes->memory_type = info.memory_type;
  if (THREADED_SIM_HAS_FIELD(openreg_pointer_attributes, attributes, device)) {
    attributes->device = info.device;
  }
  if (THREADED_SIM_HAS_FIELD(openreg_pointer_attributes, attributes, base)) {
    attributes->base = info.allocation.base;
  }
  if (THREADED_SIM_HAS_FIELD(openreg_pointer_attributes, attributes, size)) {
    attributes->size = info.allocation.size;
  }
  return OPENREG_SUCCESS;
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
  const DeviceMemory& memory = state->device(device).memory();
  *total_bytes = memory.capacity_bytes();
  *free_bytes = memory.capacity_bytes() - memory.bytes_in_use();
  return OPENREG_SUCCESS;
}

}  // namespace openreg::threaded_sim
