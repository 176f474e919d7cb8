// The C++ face of a driver context: every ABI function as a method returning
// absl::Status / absl::StatusOr, with the driver's error message attached,
// and owning types for the streams and events it creates.
//
// Ownership: a Driver owns one context of a DriverLibrary and shares the
// library (several Drivers, each with its own context, may use one library:
// Driver::Create). The destructor destroys the context; every DriverStream
// and DriverEvent made through it must be gone first (they hold a pointer to
// their Driver). Memory from DeviceMalloc/HostMalloc belongs to the context
// and is released with it.
//
// Thread-safety: every method may be called from any thread concurrently (the
// ABI requires drivers to be thread-safe); the Driver itself is immutable
// after Load/Create, and calls take no lock. Methods that block say so.
#ifndef OPENREG_CORE_DRIVER_DRIVER_H_
#define OPENREG_CORE_DRIVER_DRIVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/driver/driver_library.h"
#include "core/driver/validation_layer.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

class Driver;

// The direction of a copy (OPENREG_MEMCPY_*).
enum class CopyKind : int32_t {
  kHostToHost = OPENREG_MEMCPY_HOST_TO_HOST,
  kHostToDevice = OPENREG_MEMCPY_HOST_TO_DEVICE,
  kDeviceToHost = OPENREG_MEMCPY_DEVICE_TO_HOST,
  kDeviceToDevice = OPENREG_MEMCPY_DEVICE_TO_DEVICE,
};

// Event creation flags (OPENREG_EVENT_*).
enum class EventFlags : uint32_t {
  kDefault = OPENREG_EVENT_DEFAULT,
  kEnableTiming = OPENREG_EVENT_ENABLE_TIMING,
};

// A stream owned by its holder: destroyed through its Driver (which must
// outlive it) when the DriverStream dies or is assigned over. Move-only. A
// destroy failure cannot be reported from a destructor; the validation layer
// reports misuse on its own.
class DriverStream {
 public:
  DriverStream() = default;
  DriverStream(DriverStream&& other) noexcept;
  DriverStream& operator=(DriverStream&& other) noexcept;
  DriverStream(const DriverStream&) = delete;
  DriverStream& operator=(const DriverStream&) = delete;
  ~DriverStream();

  openreg_stream get() const { return stream_; }
  int32_t device() const { return device_; }
  explicit operator bool() const { return stream_ != nullptr; }

 private:
  friend class Driver;
  DriverStream(const Driver* driver, openreg_stream stream, int32_t device)
      : driver_(driver), stream_(stream), device_(device) {}
  void Reset();

  const Driver* driver_ = nullptr;
  openreg_stream stream_ = nullptr;
  int32_t device_ = -1;
};

// An event owned by its holder, like DriverStream. release() gives up
// ownership of the raw handle (for c10, which keeps events as void*);
// Driver::AdoptEvent takes it back.
class DriverEvent {
 public:
  DriverEvent() = default;
  DriverEvent(DriverEvent&& other) noexcept;
  DriverEvent& operator=(DriverEvent&& other) noexcept;
  DriverEvent(const DriverEvent&) = delete;
  DriverEvent& operator=(const DriverEvent&) = delete;
  ~DriverEvent();

  openreg_event get() const { return event_; }
  int32_t device() const { return device_; }
  explicit operator bool() const { return event_ != nullptr; }
  // The raw handle, no longer owned: the caller destroys it (or adopts it
  // again with Driver::AdoptEvent).
  openreg_event release();

 private:
  friend class Driver;
  DriverEvent(const Driver* driver, openreg_event event, int32_t device)
      : driver_(driver), event_(event), device_(device) {}
  void Reset();

  const Driver* driver_ = nullptr;
  openreg_event event_ = nullptr;
  int32_t device_ = -1;
};

struct DriverConfig {
  int32_t device_count = 0;          // 0: the driver's default
  uint64_t device_memory_bytes = 0;  // 0: the driver's default
  std::string options;               // driver-specific "key=value,..."
  // Not passed to the driver: puts the validation layer (validation_layer.h)
  // between the Driver and the driver's context (OPENREG_DRIVER_VALIDATION).
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
  // Loads the library at `path` (DriverLibrary::Load) and creates a context
  // of it with `config`.
  static absl::StatusOr<std::unique_ptr<Driver>> Load(
      const std::string& path, const DriverConfig& config);
  // A further context of an already loaded library (several may coexist; a
  // 1.x driver allows one at a time).
  static absl::StatusOr<std::unique_ptr<Driver>> Create(
      std::shared_ptr<const DriverLibrary> library, const DriverConfig& config);

  // Destroys the context (and the validation layer wrapping it).
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  const std::shared_ptr<const DriverLibrary>& library() const {
    return library_;
  }
  const std::string& name() const { return library_->name(); }
  const std::string& version() const { return library_->version(); }
  const std::string& path() const { return library_->path(); }
  // The ABI version the driver implements (1.x for an adapted driver).
  uint32_t abi_version_major() const { return library_->abi_version_major(); }
  uint32_t abi_version_minor() const { return library_->abi_version_minor(); }
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
                           CopyKind kind, openreg_stream stream) const;
  absl::Status MemsetAsync(void* ptr, int32_t value, size_t size,
                           openreg_stream stream) const;

  absl::StatusOr<DriverStream> CreateStream(int32_t device,
                                            int32_t priority) const;
  // True when all work enqueued so far has finished.
  absl::StatusOr<bool> StreamQuery(openreg_stream stream) const;
  // Blocks.
  absl::Status StreamSynchronize(openreg_stream stream) const;
  absl::Status StreamWaitEvent(openreg_stream stream,
                               openreg_event event) const;
  // The stream's priority as the driver reports it. kUnimplemented, naming
  // the driver and its ABI version, for a 1.0 driver (or a 1.1 driver whose
  // entry is NULL), which cannot report it.
  absl::StatusOr<int32_t> StreamGetPriority(openreg_stream stream) const;

  // What to add to an address inside a device allocation of `device` for
  // code running on the driver's threads to reach its bytes (the ABI's
  // device_execution_offset); 0, memory host-accessible where it is, for a
  // driver without that optional 2.1 function. Constant per device.
  absl::StatusOr<intptr_t> DeviceExecutionOffset(int32_t device) const;

  // Activity recording (the optional 2.2 group; docs/driver_abi.md,
  // "Activity recording"). Whether the driver has it; the others fail with
  // kUnimplemented, naming the driver, its ABI version and the group, when
  // it does not.
  bool has_activity_recording() const;
  // Why the activity group is unavailable: kUnimplemented, naming the driver,
  // its ABI version and the missing functions.
  absl::Status ActivityRecordingUnavailable() const;
  // activity_enable: `fn` NULL stops; when it returns, no call of the old
  // sink runs.
  absl::Status SetActivitySink(openreg_activity_fn fn, void* user_data) const;
  // activity_set_correlation_id, for the calling thread.
  absl::Status SetActivityCorrelationId(uint64_t correlation_id) const;
  // activity_get_timestamp: now, on the clock of the records, in ns.
  absl::StatusOr<uint64_t> ActivityTimestamp() const;

  absl::StatusOr<DriverEvent> CreateEvent(
      int32_t device, EventFlags flags = EventFlags::kDefault) const;
  // Takes ownership of `event` (from DriverEvent::release) again.
  DriverEvent AdoptEvent(openreg_event event, int32_t device) const;
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
  friend class DriverStream;
  friend class DriverEvent;

  Driver(std::shared_ptr<const DriverLibrary> library,
         openreg_context driver_context,
         std::unique_ptr<ValidationLayer> validation);

  // Converts a driver status, reading the message of the calling thread.
  absl::Status Check(openreg_status status, const char* function) const;
  // Like Check, but NOT_READY means "false" rather than an error.
  absl::StatusOr<bool> CheckReady(openreg_status status,
                                  const char* function) const;

  std::shared_ptr<const DriverLibrary> library_;
  // Destroyed by the layer when there is one (it owns the wrapped context).
  openreg_context driver_context_;
  std::unique_ptr<ValidationLayer> validation_;
  // What every call uses: the validation layer's table and context when it
  // is on, else the library's.
  const openreg_driver_api& api_;
  openreg_context context_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_DRIVER_DRIVER_H_
