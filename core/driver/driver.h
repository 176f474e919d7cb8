// The C++ face of a loaded driver: every ABI function as a method returning
// absl::Status / absl::StatusOr, with the driver's error message attached.
//
// Ownership: a Driver owns its library and the driver's global state; the
// destructor shuts the driver down and unloads it. Streams and events created
// through it are raw handles owned by the caller, who must destroy them before
// the Driver.
//
// Thread-safety: every method may be called from any thread concurrently (the
// ABI requires drivers to be thread-safe); the Driver itself is immutable
// after Load. Methods that block say so.
#ifndef OPENREG_CORE_DRIVER_DRIVER_H_
#define OPENREG_CORE_DRIVER_DRIVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/driver/driver_loader.h"
#include "driver_abi/openreg_driver.h"
#include "core/driver/validation_layer.h"

namespace openreg {

struct DriverConfig {
  int32_t device_count = 0;          // 0: the driver's default
  uint64_t device_memory_bytes = 0;  // 0: the driver's default
  std::string options;               // driver-specific "key=value,..."
  // Not passed to the driver: puts the validation layer (validation_layer.h)
  // between the Driver and the driver's table (OPENREG_DRIVER_VALIDATION).
  bool validation = false;
};

struct DeviceProperties {
  std::string name;
  uint64_t total_memory_bytes = 0;
  int32_t least_stream_priority = 0;
  int32_t greatest_stream_priority = 0;
  int32_t concurrent_streams = 1;
};

struct PointerAttributes {
  int32_t memory_type = OPENREG_MEMORY_TYPE_UNREGISTERED;
  int32_t device = -1;
  void* base = nullptr;
  uint64_t size = 0;
};

struct MemoryInfo {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
};

class Driver {
 public:
  // Loads the library at `path`, validates it and initializes it with
  // `config`.
  static absl::StatusOr<std::unique_ptr<Driver>> Load(
      const std::string& path, const DriverConfig& config);

  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& path() const { return library_.path; }
  uint32_t abi_version_major() const { return library_.api->abi_version_major; }
  uint32_t abi_version_minor() const { return library_.api->abi_version_minor; }
  // The validation layer every call goes through, or null when it is off.
  const ValidationLayer* validation() const { return validation_.get(); }

  absl::StatusOr<int32_t> DeviceCount() const;
  absl::StatusOr<DeviceProperties> GetDeviceProperties(int32_t device) const;

  absl::StatusOr<void*> DeviceMalloc(int32_t device, size_t size) const;
  absl::Status DeviceFree(int32_t device, void* ptr) const;
  absl::StatusOr<void*> HostMalloc(size_t size) const;
  absl::Status HostFree(void* ptr) const;
  absl::StatusOr<PointerAttributes> GetPointerAttributes(const void* ptr) const;
  absl::StatusOr<MemoryInfo> MemGetInfo(int32_t device) const;

  absl::Status MemcpyAsync(void* dst, const void* src, size_t size,
                           int32_t kind, openreg_stream stream) const;
  absl::Status MemsetAsync(void* ptr, int32_t value, size_t size,
                           openreg_stream stream) const;

  absl::StatusOr<openreg_stream> StreamCreate(int32_t device,
                                              int32_t priority) const;
  absl::Status StreamDestroy(openreg_stream stream) const;
  // True when all work enqueued so far has finished.
  absl::StatusOr<bool> StreamQuery(openreg_stream stream) const;
  // Blocks.
  absl::Status StreamSynchronize(openreg_stream stream) const;
  absl::Status StreamWaitEvent(openreg_stream stream,
                               openreg_event event) const;
  // The stream's priority as the driver reports it. Optional (ABI 1.1):
  // kUnimplemented, naming the driver and its ABI version, when the driver
  // implements 1.0 or does not provide it.
  absl::StatusOr<int32_t> StreamGetPriority(openreg_stream stream) const;

  absl::StatusOr<openreg_event> EventCreate(int32_t device,
                                            uint32_t flags) const;
  absl::Status EventDestroy(openreg_event event) const;
  absl::Status EventRecord(openreg_event event, openreg_stream stream) const;
  // True when the latest record has completed (or there was none).
  absl::StatusOr<bool> EventQuery(openreg_event event) const;
  // Blocks.
  absl::Status EventSynchronize(openreg_event event) const;
  absl::StatusOr<float> EventElapsedMilliseconds(openreg_event start,
                                                 openreg_event end) const;

  absl::Status LaunchHostFunc(openreg_stream stream, openreg_host_fn fn,
                              void* user_data) const;
  // Blocks.
  absl::Status DeviceSynchronize(int32_t device) const;

 private:
  Driver(LoadedDriverLibrary library,
         std::unique_ptr<ValidationLayer> validation);

  // Converts a driver status, reading the driver's per-thread message.
  absl::Status Check(openreg_status status, const char* function) const;
  // Like Check, but NOT_READY means "false" rather than an error.
  absl::StatusOr<bool> CheckReady(openreg_status status,
                                  const char* function) const;
  // The kUnimplemented error for an optional function, added in ABI
  // 1.`minor_added`, that the driver lacks: its table ends before the
  // function (`covered` false) or the entry is NULL.
  absl::Status OptionalFunctionMissing(const char* function,
                                       uint32_t minor_added,
                                       bool covered) const;

  LoadedDriverLibrary library_;
  std::unique_ptr<ValidationLayer> validation_;
  // The validation layer's table when it is on, else the driver's.
  const openreg_driver_api& api_;
  std::string name_;
  std::string version_;
  bool initialized_ = false;
};

}  // namespace openreg

#endif  // OPENREG_CORE_DRIVER_DRIVER_H_
