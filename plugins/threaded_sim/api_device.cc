#include <cstdio>
#include <memory>

#include "absl/strings/str_format.h"
#include "plugins/threaded_sim/api.h"
#include "plugins/threaded_sim/driver_state.h"
#include "plugins/sim_support/error.h"
#include "plugins/threaded_sim/global_state.h"
#include "plugins/threaded_sim/stream.h"
#include "plugins/sim_support/struct_size.h"

namespace openreg::threaded_sim {

using sim::Fail;
using sim::RequireNonNull;

namespace {

constexpr char kDeviceName[] = "openreg threaded_sim device";

}  // namespace

openreg_status GetDeviceCount(int32_t* count) {
  std::shared_ptr<DriverState> state = AcquireState("get_device_count");
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  SIM_RETURN_IF_ERROR(
      RequireNonNull(count, "get_device_count", "count"));
  *count = state->device_count();
  return OPENREG_SUCCESS;
}

openreg_status GetDeviceProperties(int32_t device,
                                   openreg_device_properties* props) {
  constexpr const char* kFunction = "get_device_properties";
  std::shared_ptr<DriverState> state = AcquireState(kFunction);
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, kFunction));
  SIM_RETURN_IF_ERROR(RequireNonNull(props, kFunction, "props"));
  if (!SIM_HAS_FIELD(openreg_device_properties, props, name)) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: props->struct_size is %u, too small for "
                                "any v1.0 field (at least %u); set it to "
                                "OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0 "
                                "(%u) or sizeof(openreg_device_properties)",
                                kFunction, props->struct_size,
                                OPENREG_STRUCT_SIZE(openreg_device_properties,
                                                    name),
                                OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0));
  }
  std::snprintf(props->name, sizeof(props->name), "%s", kDeviceName);
  if (SIM_HAS_FIELD(openreg_device_properties, props,
                             total_memory_bytes)) {
    props->total_memory_bytes = state->device_memory_bytes();
  }
  if (SIM_HAS_FIELD(openreg_device_properties, props,
                             least_stream_priority)) {
    props->least_stream_priority = kLeastStreamPriority;
  }
  if (SIM_HAS_FIELD(openreg_device_properties, props,
                             greatest_stream_priority)) {
    props->greatest_stream_priority = kGreatestStreamPriority;
  }
  if (SIM_HAS_FIELD(openreg_device_properties, props,
                             concurrent_streams)) {
    props->concurrent_streams = state->device(device).execution_slots();
  }
  return OPENREG_SUCCESS;
}

openreg_status DeviceSynchronize(int32_t device) {
  constexpr const char* kFunction = "device_synchronize";
  std::shared_ptr<DriverState> state = AcquireState(kFunction);
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  SIM_RETURN_IF_ERROR(state->CheckDevice(device, kFunction));
  return state->device(device).Synchronize(kFunction);
}

}  // namespace openreg::threaded_sim
