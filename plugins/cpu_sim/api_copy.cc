#include <cstring>

#include "plugins/cpu_sim/api.h"
#include "plugins/cpu_sim/driver_state.h"
#include "plugins/sim_support/activity_recorder.h"
#include "plugins/sim_support/context_registry.h"
#include "plugins/sim_support/copy_checks.h"
#include "plugins/sim_support/error.h"

namespace openreg::cpu_sim {

openreg_status memcpy_async(openreg_context context, void* dst, const void* src,
                            size_t size, int32_t kind, openreg_stream stream) {
  constexpr const char* kFunction = "memcpy_async";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  StreamInfo info;
  SIM_RETURN_IF_ERROR(state->streams().Lookup(stream, kFunction, &info));
  const char* description;
  SIM_RETURN_IF_ERROR(sim::CheckCopy(*state, dst, src, size, kind,
                                     &description));
  if (size == 0) return OPENREG_SUCCESS;
  SIM_RETURN_IF_ERROR(
      state->InjectFault(sim::FaultPoint::kMemcpyAsync, kFunction));
  // The device sides are reached through their execution view.
  if (sim::CopyWritesDevice(kind)) dst = state->ExecutionAddress(dst);
  if (sim::CopyReadsDevice(kind)) src = state->ExecutionAddress(src);
  // memmove rather than memcpy: a device-to-device copy within one
  // allocation may overlap, and the simulator should not corrupt it.
  const sim::ActivityTag tag = state->activity().Tag();
  absl::MutexLock in_stream_order(info.execution);
  sim::ScopedActivity recorded(
      &state->activity(), tag,
      sim::ActivityItem{OPENREG_ACTIVITY_MEMCPY, info.device, stream, kind,
                        size});
  std::memmove(dst, src, size);
  return OPENREG_SUCCESS;
}

openreg_status memset_async(openreg_context context, void* ptr, int32_t value,
                            size_t size, openreg_stream stream) {
  constexpr const char* kFunction = "memset_async";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  StreamInfo info;
  SIM_RETURN_IF_ERROR(state->streams().Lookup(stream, kFunction, &info));
  if (size == 0) return OPENREG_SUCCESS;
  SIM_RETURN_IF_ERROR(
      sim::CheckDeviceRange(*state, ptr, size, kFunction, "ptr", kFunction));
  SIM_RETURN_IF_ERROR(
      state->InjectFault(sim::FaultPoint::kMemsetAsync, kFunction));
  ptr = state->ExecutionAddress(ptr);
  // Like memset and cudaMemset, only the low byte of `value` is used.
  const sim::ActivityTag tag = state->activity().Tag();
  absl::MutexLock in_stream_order(info.execution);
  sim::ScopedActivity recorded(
      &state->activity(), tag,
      sim::ActivityItem{OPENREG_ACTIVITY_MEMSET, info.device, stream,
                        /*memcpy_kind=*/-1, size});
  std::memset(ptr, static_cast<unsigned char>(value), size);
  return OPENREG_SUCCESS;
}

}  // namespace openreg::cpu_sim
