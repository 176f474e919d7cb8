#include "core/driver/driver.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/driver/driver_status.h"

namespace openreg {

absl::StatusOr<std::unique_ptr<Driver>> Driver::Load(
    const std::string& path, const DriverConfig& config) {
  absl::StatusOr<LoadedDriverLibrary> library = LoadDriverLibrary(path);
  if (!library.ok()) return library.status();
  std::unique_ptr<ValidationLayer> validation;
  if (config.validation) {
    absl::StatusOr<std::unique_ptr<ValidationLayer>> layer =
        ValidationLayer::Create(library->api);
    if (!layer.ok()) {
      UnloadDriverLibrary(*library);
      return layer.status();
    }
    validation = *std::move(layer);
  }
  std::unique_ptr<Driver> driver(
      new Driver(*std::move(library), std::move(validation)));
  openreg_driver_config raw_config{};
  raw_config.struct_size = OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0;
  raw_config.device_count = config.device_count;
  raw_config.device_memory_bytes = config.device_memory_bytes;
  raw_config.options = config.options.empty() ? nullptr : config.options.c_str();
  if (absl::Status status = driver->Check(driver->api_.init(&raw_config), "init");
      !status.ok()) {
    return status;
  }
  driver->initialized_ = true;
  return driver;
}

Driver::Driver(LoadedDriverLibrary library,
               std::unique_ptr<ValidationLayer> validation)
    : library_(std::move(library)),
      validation_(std::move(validation)),
      api_(validation_ ? *validation_->api() : *library_.api),
      name_(api_.driver_name),
      version_(api_.driver_version) {}

Driver::~Driver() {
  if (initialized_) api_.shutdown();
  validation_.reset();
  UnloadDriverLibrary(library_);
}

absl::Status Driver::Check(openreg_status status, const char* function) const {
  if (status == OPENREG_SUCCESS) return absl::OkStatus();
  return DriverStatusToAbsl(status, name_, function, api_.last_error_message());
}

absl::StatusOr<bool> Driver::CheckReady(openreg_status status,
                                        const char* function) const {
  if (status == OPENREG_ERROR_NOT_READY) return false;
  if (absl::Status error = Check(status, function); !error.ok()) return error;
  return true;
}

absl::Status Driver::OptionalFunctionMissing(const char* function,
                                             uint32_t minor_added,
                                             bool covered) const {
  if (!covered) {
    return absl::UnimplementedError(absl::StrCat(
        "openreg driver '", name_, "' implements driver ABI ",
        abi_version_major(), ".", abi_version_minor(), "; ", function,
        " needs ABI ", OPENREG_DRIVER_ABI_VERSION_MAJOR, ".", minor_added,
        " (the driver's function table, ", api_.struct_size,
        " bytes, ends before it) — update the driver to one built for ABI ",
        OPENREG_DRIVER_ABI_VERSION_MAJOR, ".", minor_added, " or later."));
  }
  return absl::UnimplementedError(absl::StrCat(
      "openreg driver '", name_, "' (driver ABI ", abi_version_major(), ".",
      abi_version_minor(), ") does not implement the optional function ",
      function, ": its table entry is NULL."));
}

absl::StatusOr<int32_t> Driver::DeviceCount() const {
  int32_t count = 0;
  if (absl::Status s = Check(api_.get_device_count(&count), "get_device_count");
      !s.ok()) {
    return s;
  }
  return count;
}

absl::StatusOr<DeviceProperties> Driver::GetDeviceProperties(
    int32_t device) const {
  openreg_device_properties raw{};
  raw.struct_size = sizeof(raw);
  if (absl::Status s = Check(api_.get_device_properties(device, &raw),
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
  if (absl::Status s = Check(api_.device_malloc(device, size, &ptr),
                             "device_malloc");
      !s.ok()) {
    return s;
  }
  return ptr;
}

absl::Status Driver::DeviceFree(int32_t device, void* ptr) const {
  return Check(api_.device_free(device, ptr), "device_free");
}

absl::StatusOr<void*> Driver::HostMalloc(size_t size) const {
  void* ptr = nullptr;
  if (absl::Status s = Check(api_.host_malloc(size, &ptr), "host_malloc");
      !s.ok()) {
    return s;
  }
  return ptr;
}

absl::Status Driver::HostFree(void* ptr) const {
  return Check(api_.host_free(ptr), "host_free");
}

absl::StatusOr<PointerAttributes> Driver::GetPointerAttributes(
    const void* ptr) const {
  openreg_pointer_attributes raw{};
  raw.struct_size = sizeof(raw);
  if (absl::Status s = Check(api_.pointer_get_attributes(ptr, &raw),
                             "pointer_get_attributes");
      !s.ok()) {
    return s;
  }
  return PointerAttributes{raw.memory_type, raw.device, raw.base, raw.size};
}

absl::StatusOr<MemoryInfo> Driver::MemGetInfo(int32_t device) const {
  MemoryInfo info;
  if (absl::Status s = Check(
          api_.mem_get_info(device, &info.free_bytes, &info.total_bytes),
          "mem_get_info");
      !s.ok()) {
    return s;
  }
  return info;
}

absl::Status Driver::MemcpyAsync(void* dst, const void* src, size_t size,
                                 int32_t kind, openreg_stream stream) const {
  return Check(api_.memcpy_async(dst, src, size, kind, stream), "memcpy_async");
}

absl::Status Driver::MemsetAsync(void* ptr, int32_t value, size_t size,
                                 openreg_stream stream) const {
  return Check(api_.memset_async(ptr, value, size, stream), "memset_async");
}

absl::StatusOr<openreg_stream> Driver::StreamCreate(int32_t device,
                                                    int32_t priority) const {
  openreg_stream stream = nullptr;
  if (absl::Status s = Check(api_.stream_create(device, priority, &stream),
                             "stream_create");
      !s.ok()) {
    return s;
  }
  return stream;
}

absl::Status Driver::StreamDestroy(openreg_stream stream) const {
  return Check(api_.stream_destroy(stream), "stream_destroy");
}

absl::StatusOr<bool> Driver::StreamQuery(openreg_stream stream) const {
  return CheckReady(api_.stream_query(stream), "stream_query");
}

absl::Status Driver::StreamSynchronize(openreg_stream stream) const {
  return Check(api_.stream_synchronize(stream), "stream_synchronize");
}

absl::Status Driver::StreamWaitEvent(openreg_stream stream,
                                     openreg_event event) const {
  return Check(api_.stream_wait_event(stream, event), "stream_wait_event");
}

absl::StatusOr<int32_t> Driver::StreamGetPriority(
    openreg_stream stream) const {
  // The entry is read only once struct_size shows it is there: a 1.0 table
  // ends before it.
  const bool covered =
      api_.struct_size >= OPENREG_DRIVER_API_STRUCT_SIZE_V1_1;
  if (!covered || api_.stream_get_priority == nullptr) {
    return OptionalFunctionMissing("stream_get_priority", 1, covered);
  }
  int32_t priority = 0;
  if (absl::Status s = Check(api_.stream_get_priority(stream, &priority),
                             "stream_get_priority");
      !s.ok()) {
    return s;
  }
  return priority;
}

absl::StatusOr<openreg_event> Driver::EventCreate(int32_t device,
                                                  uint32_t flags) const {
  openreg_event event = nullptr;
  if (absl::Status s = Check(api_.event_create(device, flags, &event),
                             "event_create");
      !s.ok()) {
    return s;
  }
  return event;
}

absl::Status Driver::EventDestroy(openreg_event event) const {
  return Check(api_.event_destroy(event), "event_destroy");
}

absl::Status Driver::EventRecord(openreg_event event,
                                 openreg_stream stream) const {
  return Check(api_.event_record(event, stream), "event_record");
}

absl::StatusOr<bool> Driver::EventQuery(openreg_event event) const {
  return CheckReady(api_.event_query(event), "event_query");
}

absl::Status Driver::EventSynchronize(openreg_event event) const {
  return Check(api_.event_synchronize(event), "event_synchronize");
}

absl::StatusOr<float> Driver::EventElapsedMilliseconds(
    openreg_event start, openreg_event end) const {
  float milliseconds = 0;
  if (absl::Status s = Check(api_.event_elapsed_time(start, end, &milliseconds),
                             "event_elapsed_time");
      !s.ok()) {
    return s;
  }
  return milliseconds;
}

absl::Status Driver::LaunchHostFunc(openreg_stream stream, openreg_host_fn fn,
                                    void* user_data) const {
  return Check(api_.launch_host_func(stream, fn, user_data),
               "launch_host_func");
}

absl::Status Driver::DeviceSynchronize(int32_t device) const {
  return Check(api_.device_synchronize(device), "device_synchronize");
}

}  // namespace openreg
