#include "plugins/sim_support/shared_api.h"

#include <cstdio>

#include "plugins/sim_support/context_registry.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/sim_state.h"
#include "plugins/sim_support/struct_size.h"

namespace openreg::sim {

openreg_status get_device_count(openreg_context context, int32_t* count) {
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, "get_device_count", &state));
  SIM_RETURN_IF_ERROR(RequireNonNull(count, "get_device_count", "count"));
  *count = state->device_count();
  return OPENREG_SUCCESS;
}

openreg_status get_device_properties(openreg_context context, int32_t device,
                                     openreg_device_properties* props) {
  constexpr const char* kFunction = "get_device_properties";
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, kFunction, &state));
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, kFunction));
  SIM_RETURN_IF_ERROR(RequireNonNull(props, kFunction, "props"));
  SIM_RETURN_IF_ERROR(SIM_CHECK_V1_0_STRUCT_SIZE(
      openreg_device_properties, props, name,
      OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0, kFunction));
  std::snprintf(props->name, sizeof(props->name), "openreg %s device",
                state->driver_name());
  if (SIM_HAS_FIELD(openreg_device_properties, props, total_memory_bytes)) {
    props->total_memory_bytes = state->device_memory_bytes();
  }
  if (SIM_HAS_FIELD(openreg_device_properties, props, least_stream_priority)) {
    props->least_stream_priority = state->stream_priorities().least;
  }
  if (SIM_HAS_FIELD(openreg_device_properties, props,
                    greatest_stream_priority)) {
    props->greatest_stream_priority = state->stream_priorities().greatest;
  }
  if (SIM_HAS_FIELD(openreg_device_properties, props, concurrent_streams)) {
    props->concurrent_streams = state->concurrent_streams(device);
  }
  return OPENREG_SUCCESS;
}

openreg_status device_malloc(openreg_context context, int32_t device,
                             size_t size, void** ptr) {
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, "device_malloc", &state));
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, "device_malloc"));
  SIM_RETURN_IF_ERROR(RequireNonNull(ptr, "device_malloc", "ptr"));
  if (size == 0) {
    *ptr = nullptr;
    return OPENREG_SUCCESS;
  }
  SIM_RETURN_IF_ERROR(
      state->InjectFault(FaultPoint::kDeviceMalloc, "device_malloc"));
  return state->device_memory(device).Allocate(size, ptr);
}

openreg_status device_free(openreg_context context, int32_t device,
                           void* ptr) {
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, "device_free", &state));
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, "device_free"));
  if (ptr == nullptr) return OPENREG_SUCCESS;
  return state->device_memory(device).Free(ptr);
}

openreg_status host_malloc(openreg_context context, size_t size, void** ptr) {
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, "host_malloc", &state));
  SIM_RETURN_IF_ERROR(RequireNonNull(ptr, "host_malloc", "ptr"));
  // Mirrors device_malloc, which the ABI defines to give NULL for size 0.
  if (size == 0) {
    *ptr = nullptr;
    return OPENREG_SUCCESS;
  }
  SIM_RETURN_IF_ERROR(
      state->InjectFault(FaultPoint::kHostMalloc, "host_malloc"));
  return state->pinned_memory().Allocate(size, ptr);
}

openreg_status host_free(openreg_context context, void* ptr) {
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, "host_free", &state));
  if (ptr == nullptr) return OPENREG_SUCCESS;
  return state->pinned_memory().Free(ptr);
}

openreg_status pointer_get_attributes(openreg_context context, const void* ptr,
                                      openreg_pointer_attributes* attributes) {
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, "pointer_get_attributes", &state));
  return WritePointerAttributes(state->Classify(ptr), attributes);
}

openreg_status mem_get_info(openreg_context context, int32_t device,
                            uint64_t* free_bytes, uint64_t* total_bytes) {
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, "mem_get_info", &state));
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, "mem_get_info"));
  SIM_RETURN_IF_ERROR(RequireNonNull(free_bytes, "mem_get_info", "free_bytes"));
  SIM_RETURN_IF_ERROR(
      RequireNonNull(total_bytes, "mem_get_info", "total_bytes"));
  const DeviceMemory& memory = state->device_memory(device);
  *total_bytes = memory.capacity_bytes();
  *free_bytes = memory.capacity_bytes() - memory.bytes_in_use();
  return OPENREG_SUCCESS;
}

openreg_status device_execution_offset(openreg_context context, int32_t device,
                                       intptr_t* offset) {
  constexpr const char* kFunction = "device_execution_offset";
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, kFunction, &state));
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, kFunction));
  SIM_RETURN_IF_ERROR(RequireNonNull(offset, kFunction, "offset"));
  *offset = state->device_memory(device).execution_offset();
  return OPENREG_SUCCESS;
}

openreg_status activity_enable(openreg_context context, openreg_activity_fn fn,
                               void* user_data) {
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, "activity_enable", &state));
  state->activity().SetSink(fn, user_data);
  return OPENREG_SUCCESS;
}

openreg_status activity_set_correlation_id(openreg_context context,
                                           uint64_t correlation_id) {
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(
      FindState(context, "activity_set_correlation_id", &state));
  state->activity().SetCorrelationId(correlation_id);
  return OPENREG_SUCCESS;
}

openreg_status activity_get_timestamp(openreg_context context,
                                      uint64_t* timestamp_ns) {
  constexpr const char* kFunction = "activity_get_timestamp";
  SimState* state = nullptr;
  SIM_RETURN_IF_ERROR(FindState(context, kFunction, &state));
  SIM_RETURN_IF_ERROR(RequireNonNull(timestamp_ns, kFunction, "timestamp_ns"));
  *timestamp_ns = ActivityRecorder::Now();
  return OPENREG_SUCCESS;
}

}  // namespace openreg::sim
