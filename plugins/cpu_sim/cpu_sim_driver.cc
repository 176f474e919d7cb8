// The only exported symbol of libopenreg_cpu_sim.so: the ABI entry point and
// the static function table it hands out. The library is built with
// -fvisibility=hidden so nothing else leaks into the core's symbol space.
#include "absl/strings/str_format.h"
#include "core/driver/openreg_driver.h"
#include "plugins/cpu_sim/api.h"
#include "plugins/sim_support/error.h"

namespace openreg::cpu_sim {
namespace {

// The driver's name: in the function table and, through sim::DriverName(), as
// the prefix of every error message.
constexpr char kDriverName[] = "cpu_sim";

// The table is filled for ABI v1.0 exactly; a newer minor version appends
// fields that this driver must opt into explicitly, so the minor version and
// struct_size stay at 1.0 until then.
constexpr openreg_driver_api kApi = {
    /*struct_size=*/OPENREG_DRIVER_API_STRUCT_SIZE_V1_0,
    /*abi_version_major=*/OPENREG_DRIVER_ABI_VERSION_MAJOR,
    /*abi_version_minor=*/0,
    /*driver_name=*/kDriverName,
    /*driver_version=*/"1.0.0",
    /*init=*/Init,
    /*shutdown=*/Shutdown,
    /*last_error_message=*/GetLastErrorMessage,
    /*get_device_count=*/GetDeviceCount,
    /*get_device_properties=*/GetDeviceProperties,
    /*device_malloc=*/DeviceMalloc,
    /*device_free=*/DeviceFree,
    /*host_malloc=*/HostMalloc,
    /*host_free=*/HostFree,
    /*pointer_get_attributes=*/PointerGetAttributes,
    /*mem_get_info=*/MemGetInfo,
    /*memcpy_async=*/MemcpyAsync,
    /*memset_async=*/MemsetAsync,
    /*stream_create=*/StreamCreate,
    /*stream_destroy=*/StreamDestroy,
    /*stream_query=*/StreamQuery,
    /*stream_synchronize=*/StreamSynchronize,
    /*stream_wait_event=*/StreamWaitEvent,
    /*event_create=*/EventCreate,
    /*event_destroy=*/EventDestroy,
    /*event_record=*/EventRecord,
    /*event_query=*/EventQuery,
    /*event_synchronize=*/EventSynchronize,
    /*event_elapsed_time=*/EventElapsedTime,
    /*launch_host_func=*/LaunchHostFunc,
    /*device_synchronize=*/DeviceSynchronize,
};

}  // namespace
}  // namespace openreg::cpu_sim

// Declared by plugins/sim_support/error.h; each driver defines it once.
const char* openreg::sim::DriverName() {
  return openreg::cpu_sim::kDriverName;
}

extern "C" __attribute__((visibility("default"))) openreg_status
OPENREG_DRIVER_ENTRY_SYMBOL(uint32_t core_abi_major, uint32_t core_abi_minor,
                            const openreg_driver_api** api) {
  using openreg::sim::Fail;
  if (api == nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "openreg_driver_get_api: argument 'api' is NULL; pass the "
                "address of a const openreg_driver_api* to receive the table");
  }
  // Compatibility is the core's decision (it reads abi_version_major from the
  // table), so the table is returned whatever version the core speaks.
  static_cast<void>(core_abi_major);
  static_cast<void>(core_abi_minor);
  *api = &openreg::cpu_sim::kApi;
  return OPENREG_SUCCESS;
}
