#include "plugins/sim_support/copy_checks.h"

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {
namespace {

// The description of a copy in failure messages, or null for a bad kind.
const char* CopyDescription(int32_t kind) {
  switch (kind) {
    case OPENREG_MEMCPY_HOST_TO_HOST:
      return "memcpy_async (OPENREG_MEMCPY_HOST_TO_HOST)";
    case OPENREG_MEMCPY_HOST_TO_DEVICE:
      return "memcpy_async (OPENREG_MEMCPY_HOST_TO_DEVICE)";
    case OPENREG_MEMCPY_DEVICE_TO_HOST:
      return "memcpy_async (OPENREG_MEMCPY_DEVICE_TO_HOST)";
    case OPENREG_MEMCPY_DEVICE_TO_DEVICE:
      return "memcpy_async (OPENREG_MEMCPY_DEVICE_TO_DEVICE)";
  }
  return nullptr;
}

}  // namespace

openreg_status CheckCopy(const SimState& state, void* dst, const void* src,
                         size_t size, int32_t kind, const char** description) {
  constexpr const char* kFunction = "memcpy_async";
  *description = CopyDescription(kind);
  if (*description == nullptr) {
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
  // The description names the kind, which is what the device memory is for.
  if (CopyReadsDevice(kind)) {
    SIM_RETURN_IF_ERROR(
        CheckDeviceRange(state, src, size, kFunction, "src", *description));
  }
  if (CopyWritesDevice(kind)) {
    SIM_RETURN_IF_ERROR(
        CheckDeviceRange(state, dst, size, kFunction, "dst", *description));
  }
  return OPENREG_SUCCESS;
}

openreg_status CheckDeviceRange(const SimState& state, const void* ptr,
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
  if (!allocation.Holds(ptr, size)) {
    const uint64_t available = allocation.size - allocation.OffsetOf(ptr);
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: %s range [%p, +%u bytes) runs past the "
                                "end of its device allocation [%p, +%u bytes) "
                                "on device %d by %u bytes; shorten the size "
                                "or use a larger allocation",
                                function, role, ptr, size, allocation.base,
                                allocation.size, info.device,
                                size - available));
  }
  return OPENREG_SUCCESS;
}

}  // namespace openreg::sim
