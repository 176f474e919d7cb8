#include "core/driver/driver.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/driver/driver_status.h"

namespace openreg {

DriverStream::DriverStream(DriverStream&& other) noexcept
    : driver_(std::exchange(other.driver_, nullptr)),
      stream_(std::exchange(other.stream_, nullptr)),
      device_(std::exchange(other.device_, -1)) {}

DriverStream& DriverStream::operator=(DriverStream&& other) noexcept {
  if (this != &other) {
    Reset();
    driver_ = std::exchange(other.driver_, nullptr);
    stream_ = std::exchange(other.stream_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

DriverStream::~DriverStream() { Reset(); }

void DriverStream::Reset() {
  if (stream_ != nullptr) {
    driver_->api_.stream_destroy(driver_->context_, stream_);
  }
  driver_ = nullptr;
  stream_ = nullptr;
  device_ = -1;
}

DriverEvent::DriverEvent(DriverEvent&& other) noexcept
    : driver_(std::exchange(other.driver_, nullptr)),
      event_(std::exchange(other.event_, nullptr)),
      device_(std::exchange(other.device_, -1)) {}

DriverEvent& DriverEvent::operator=(DriverEvent&& other) noexcept {
  if (this != &other) {
    Reset();
    driver_ = std::exchange(other.driver_, nullptr);
    event_ = std::exchange(other.event_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

DriverEvent::~DriverEvent() { Reset(); }

openreg_event DriverEvent::release() {
  driver_ = nullptr;
  device_ = -1;
  return std::exchange(event_, nullptr);
}

void DriverEvent::Reset() {
  if (event_ != nullptr) {
    driver_->api_.event_destroy(driver_->context_, event_);
  }
  driver_ = nullptr;
  event_ = nullptr;
  device_ = -1;
}

absl::StatusOr<std::unique_ptr<Driver>> Driver::Load(
    const std::string& path, const DriverConfig& config) {
  absl::StatusOr<std::shared_ptr<const DriverLibrary>> library =
      DriverLibrary::Load(path);
  if (!library.ok()) return library.status();
  return Create(*std::move(library), config);
}

absl::StatusOr<std::unique_ptr<Driver>> Driver::Create(
    std::shared_ptr<const DriverLibrary> library, const DriverConfig& config) {
  openreg_driver_config raw_config{};
  raw_config.struct_size = OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0;
  raw_config.device_count = config.device_count;
  raw_config.device_memory_bytes = config.device_memory_bytes;
  raw_config.options =
      config.options.empty() ? nullptr : config.options.c_str();
  const openreg_driver_api& api = library->api();
  openreg_context context = nullptr;
  if (const openreg_status status =
          library->CreateContext(&raw_config, &context);
      status != OPENREG_SUCCESS) {
    return DriverStatusToAbsl(status, library->name(), "context_create",
                              api.last_error_message(nullptr));
  }
  std::unique_ptr<ValidationLayer> validation;
  if (config.validation) {
    absl::StatusOr<std::unique_ptr<ValidationLayer>> layer =
        ValidationLayer::Wrap(api, context);
    if (!layer.ok()) {
      api.context_destroy(context);
      return layer.status();
    }
    validation = *std::move(layer);
  }
  return std::unique_ptr<Driver>(
      new Driver(std::move(library), context, std::move(validation)));
}

Driver::Driver(std::shared_ptr<const DriverLibrary> library,
               openreg_context driver_context,
               std::unique_ptr<ValidationLayer> validation)
    : library_(std::move(library)),
      driver_context_(driver_context),
      validation_(std::move(validation)),
      api_(validation_ ? validation_->api() : library_->api()),
      context_(validation_ ? validation_->context() : driver_context_) {}

Driver::~Driver() {
  // With the layer on, its context_destroy destroys the driver's context.
  api_.context_destroy(context_);
  validation_.reset();
}

absl::Status Driver::Check(openreg_status status, const char* function) const {
  if (status == OPENREG_SUCCESS) return absl::OkStatus();
  return DriverStatusToAbsl(status, name(), function,
                            api_.last_error_message(context_));
}

absl::StatusOr<bool> Driver::CheckReady(openreg_status status,
                                        const char* function) const {
  if (status == OPENREG_ERROR_NOT_READY) return false;
  if (absl::Status error = Check(status, function); !error.ok()) return error;
  return true;
}

absl::StatusOr<int32_t> Driver::DeviceCount() const {
  int32_t count = 0;
  if (absl::Status s =
          Check(api_.get_device_count(context_, &count), "get_device_count");
      !s.ok()) {
    return s;
  }
  return count;
}

absl::StatusOr<DeviceProperties> Driver::GetDeviceProperties(
    int32_t device) const {
  openreg_device_properties raw{};
  raw.struct_size = sizeof(raw);
  if (absl::Status s = Check(api_.get_device_properties(context_, device, &raw),
                             "get_device_properties");
      !s.ok()) {
    return s;
  }
  raw.name[OPENREG_DEVICE_NAME_MAX - 1] = '\0';
  return DeviceProperties{raw.name, raw.total_memory_bytes,
                          raw.least_stream_priority,
                          raw.greatest_stream_priority,
                          raw.concurrent_streams};
}

absl::StatusOr<void*> Driver::DeviceMalloc(int32_t device, size_t size) const {
  void* ptr = nullptr;
  if (absl::Status s = Check(api_.device_malloc(context_, device, size, &ptr),
                             "device_malloc");
      !s.ok()) {
    return s;
  }
  return ptr;
}

absl::Status Driver::DeviceFree(int32_t device, void* ptr) const {
  return Check(api_.device_free(context_, device, ptr), "device_free");
}

absl::StatusOr<void*> Driver::HostMalloc(size_t size) const {
  void* ptr = nullptr;
  if (absl::Status s =
          Check(api_.host_malloc(context_, size, &ptr), "host_malloc");
      !s.ok()) {
    return s;
  }
  return ptr;
}

absl::Status Driver::HostFree(void* ptr) const {
  return Check(api_.host_free(context_, ptr), "host_free");
}

absl::StatusOr<PointerAttributes> Driver::GetPointerAttributes(
    const void* ptr) const {
  openreg_pointer_attributes raw{};
  raw.struct_size = sizeof(raw);
  if (absl::Status s = Check(api_.pointer_get_attributes(context_, ptr, &raw),
                             "pointer_get_attributes");
      !s.ok()) {
    return s;
  }
  return PointerAttributes{raw.memory_type, raw.device, raw.base, raw.size};
}

absl::StatusOr<MemoryInfo> Driver::MemGetInfo(int32_t device) const {
  MemoryInfo info;
  if (absl::Status s =
          Check(api_.mem_get_info(context_, device, &info.free_bytes,
                                  &info.total_bytes),
                "mem_get_info");
      !s.ok()) {
    return s;
  }
  return info;
}

absl::Status Driver::MemcpyAsync(void* dst, const void* src, size_t size,
                                 CopyKind kind, openreg_stream stream) const {
  return Check(api_.memcpy_async(context_, dst, src, size,
                                 static_cast<int32_t>(kind), stream),
               "memcpy_async");
}

absl::Status Driver::MemsetAsync(void* ptr, int32_t value, size_t size,
                                 openreg_stream stream) const {
  return Check(api_.memset_async(context_, ptr, value, size, stream),
               "memset_async");
}

absl::StatusOr<DriverStream> Driver::CreateStream(int32_t device,
                                                  int32_t priority) const {
  openreg_stream stream = nullptr;
  if (absl::Status s =
          Check(api_.stream_create(context_, device, priority, &stream),
                "stream_create");
      !s.ok()) {
    return s;
  }
  return DriverStream(this, stream, device);
}

absl::StatusOr<bool> Driver::StreamQuery(openreg_stream stream) const {
  return CheckReady(api_.stream_query(context_, stream), "stream_query");
}

absl::Status Driver::StreamSynchronize(openreg_stream stream) const {
  return Check(api_.stream_synchronize(context_, stream), "stream_synchronize");
}

absl::Status Driver::StreamWaitEvent(openreg_stream stream,
                                     openreg_event event) const {
  return Check(api_.stream_wait_event(context_, stream, event),
               "stream_wait_event");
}

absl::StatusOr<int32_t> Driver::StreamGetPriority(
    openreg_stream stream) const {
  // A 1.x driver without it is reported by the adapter as NOT_SUPPORTED
  // (kUnimplemented), naming the driver and its ABI version.
  int32_t priority = 0;
  if (absl::Status s =
          Check(api_.stream_get_priority(context_, stream, &priority),
                "stream_get_priority");
      !s.ok()) {
    return s;
  }
  return priority;
}

absl::StatusOr<intptr_t> Driver::DeviceExecutionOffset(int32_t device) const {
  // Optional (2.1): a table too old for it, or without it, means device
  // memory is host-accessible where it is, which is offset 0.
  if (api_.struct_size < OPENREG_DRIVER_API_STRUCT_SIZE_V2_1 ||
      api_.device_execution_offset == nullptr) {
    return 0;
  }
  intptr_t offset = 0;
  if (absl::Status s =
          Check(api_.device_execution_offset(context_, device, &offset),
                "device_execution_offset");
      !s.ok()) {
    return s;
  }
  return offset;
}

bool Driver::has_activity_recording() const {
  return openreg_driver_has_activity_recording(&api_);
}

absl::Status Driver::ActivityRecordingUnavailable() const {
  return absl::UnimplementedError(absl::StrCat(
      "openreg driver '", name(), "' (driver ABI ", abi_version_major(), ".",
      abi_version_minor(),
      ") does not implement the optional activity-recording group of ABI "
      "2.2 (activity_enable, activity_set_correlation_id, "
      "activity_get_timestamp), so profilers see no device activity; use a "
      "driver that implements it, such as cpu_sim or threaded_sim"));
}

absl::Status Driver::SetActivitySink(openreg_activity_fn fn,
                                     void* user_data) const {
  if (!has_activity_recording()) return ActivityRecordingUnavailable();
  return Check(api_.activity_enable(context_, fn, user_data),
               "activity_enable");
}

absl::Status Driver::SetActivityCorrelationId(uint64_t correlation_id) const {
  if (!has_activity_recording()) return ActivityRecordingUnavailable();
  return Check(api_.activity_set_correlation_id(context_, correlation_id),
               "activity_set_correlation_id");
}

absl::StatusOr<uint64_t> Driver::ActivityTimestamp() const {
  if (!has_activity_recording()) return ActivityRecordingUnavailable();
  uint64_t now = 0;
  if (absl::Status s = Check(api_.activity_get_timestamp(context_, &now),
                             "activity_get_timestamp");
      !s.ok()) {
    return s;
  }
  return now;
}

absl::StatusOr<DriverEvent> Driver::CreateEvent(int32_t device,
                                                EventFlags flags) const {
  openreg_event event = nullptr;
  if (absl::Status s =
          Check(api_.event_create(context_, device,
                                  static_cast<uint32_t>(flags), &event),
                "event_create");
      !s.ok()) {
    return s;
  }
  return DriverEvent(this, event, device);
}

DriverEvent Driver::AdoptEvent(openreg_event event, int32_t device) const {
  return DriverEvent(this, event, device);
}

absl::Status Driver::EventRecord(openreg_event event,
                                 openreg_stream stream) const {
  return Check(api_.event_record(context_, event, stream), "event_record");
}

absl::StatusOr<bool> Driver::EventQuery(openreg_event event) const {
  return CheckReady(api_.event_query(context_, event), "event_query");
}

absl::Status Driver::EventSynchronize(openreg_event event) const {
  return Check(api_.event_synchronize(context_, event), "event_synchronize");
}

absl::StatusOr<float> Driver::EventElapsedMilliseconds(
    openreg_event start, openreg_event end) const {
  float milliseconds = 0;
  if (absl::Status s =
          Check(api_.event_elapsed_time(context_, start, end, &milliseconds),
                "event_elapsed_time");
      !s.ok()) {
    return s;
  }
  return milliseconds;
}

absl::Status Driver::LaunchHostFunc(openreg_stream stream, openreg_host_fn fn,
                                    void* user_data) const {
  return Check(api_.launch_host_func(context_, stream, fn, user_data),
               "launch_host_func");
}

absl::Status Driver::DeviceSynchronize(int32_t device) const {
  return Check(api_.device_synchronize(context_, device), "device_synchronize");
}

}  // namespace openreg
