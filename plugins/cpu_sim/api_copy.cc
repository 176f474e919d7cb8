#include <cstring>
#include <memory>

#include "absl/strings/str_format.h"
#include "plugins/cpu_sim/api.h"
#include "plugins/cpu_sim/driver_state.h"
#include "plugins/sim_support/error.h"

namespace openreg::cpu_sim {

using sim::Allocation;
using sim::Fail;
using sim::RequireNonNull;

namespace {

const char* KindName(int32_t kind) {
  switch (kind) {
    case OPENREG_MEMCPY_HOST_TO_HOST:
      return "OPENREG_MEMCPY_HOST_TO_HOST";
    case OPENREG_MEMCPY_HOST_TO_DEVICE:
      return "OPENREG_MEMCPY_HOST_TO_DEVICE";
    case OPENREG_MEMCPY_DEVICE_TO_HOST:
      return "OPENREG_MEMCPY_DEVICE_TO_HOST";
    case OPENREG_MEMCPY_DEVICE_TO_DEVICE:
      return "OPENREG_MEMCPY_DEVICE_TO_DEVICE";
  }
  return nullptr;
}

// Fails with INVALID_ARGUMENT unless [ptr, ptr + size) lies inside a single
// live device allocation. `role` ("dst", "src", "ptr") and `purpose` say in
// the message which argument is wrong and why it must be device memory.
openreg_status CheckDeviceRange(const DriverState& state, const void* ptr,
                                size_t size, const char* function,
                                const char* role, const char* purpose) {
  const PointerInfo info = state.Classify(ptr);
  if (info.memory_type != OPENREG_MEMORY_TYPE_DEVICE) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: %s %p is not inside any live device "
                                "allocation%s, but %s needs device memory "
                                "there; pass memory from device_malloc",
                                function, role, ptr,
                                info.memory_type == OPENREG_MEMORY_TYPE_HOST
                                    ? " (it is pinned host memory)"
                                    : "",
                                purpose));
  }
  const Allocation& allocation = info.allocation;
  const uint64_t offset = static_cast<const char*>(ptr) -
                          static_cast<const char*>(allocation.base);
  if (size > allocation.size - offset) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: %s range [%p, +%u bytes) runs past the "
                                "end of its device allocation [%p, +%u bytes) "
                                "on device %d by %u bytes; shorten the size "
                                "or use a larger allocation",
                                function, role, ptr, size, allocation.base,
                                allocation.size, info.device,
                                size - (allocation.size - offset)));
  }
  return OPENREG_SUCCESS;
}

}  // namespace

openreg_status MemcpyAsync(void* dst, const void* src, size_t size,
                           int32_t kind, openreg_stream stream) {
  constexpr const char* kFunction = "memcpy_async";
  std::shared_ptr<DriverState> state = AcquireState(kFunction);
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  StreamInfo info;
  SIM_RETURN_IF_ERROR(state->streams().Lookup(stream, kFunction, &info));
  const char* kind_name = KindName(kind);
  if (kind_name == nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: kind %d is not a copy direction; use one "
                                "of OPENREG_MEMCPY_HOST_TO_HOST (0), "
                                "HOST_TO_DEVICE (1), DEVICE_TO_HOST (2) or "
                                "DEVICE_TO_DEVICE (3)",
                                kFunction, kind));
  }
  if (size == 0) return OPENREG_SUCCESS;
  SIM_RETURN_IF_ERROR(RequireNonNull(dst, kFunction, "dst"));
  SIM_RETURN_IF_ERROR(RequireNonNull(src, kFunction, "src"));
  const bool device_src = kind == OPENREG_MEMCPY_DEVICE_TO_HOST ||
                          kind == OPENREG_MEMCPY_DEVICE_TO_DEVICE;
  const bool device_dst = kind == OPENREG_MEMCPY_HOST_TO_DEVICE ||
                          kind == OPENREG_MEMCPY_DEVICE_TO_DEVICE;
  if (device_src) {
    if (openreg_status s =
            CheckDeviceRange(*state, src, size, kFunction, "src", kind_name);
        s != OPENREG_SUCCESS) {
      return s;
    }
  }
  if (device_dst) {
    if (openreg_status s =
            CheckDeviceRange(*state, dst, size, kFunction, "dst", kind_name);
        s != OPENREG_SUCCESS) {
      return s;
    }
  }
  // memmove rather than memcpy: a device-to-device copy within one
  // allocation may overlap, and the simulator should not corrupt it.
  absl::MutexLock in_stream_order(info.execution.get());
  std::memmove(dst, src, size);
  return OPENREG_SUCCESS;
}

openreg_status MemsetAsync(void* ptr, int32_t value, size_t size,
                           openreg_stream stream) {
  constexpr const char* kFunction = "memset_async";
  std::shared_ptr<DriverState> state = AcquireState(kFunction);
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  StreamInfo info;
  SIM_RETURN_IF_ERROR(state->streams().Lookup(stream, kFunction, &info));
  if (size == 0) return OPENREG_SUCCESS;
  if (openreg_status s =
          CheckDeviceRange(*state, ptr, size, kFunction, "ptr", kFunction);
      s != OPENREG_SUCCESS) {
    return s;
  }
  // Like memset and cudaMemset, only the low byte of `value` is used.
  absl::MutexLock in_stream_order(info.execution.get());
  std::memset(ptr, static_cast<unsigned char>(value), size);
  return OPENREG_SUCCESS;
}

}  // namespace openreg::cpu_sim
