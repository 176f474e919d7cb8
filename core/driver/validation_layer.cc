#include "core/driver/validation_layer.h"

#include <atomic>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace openreg {
namespace {

// The layer the table's functions forward to (see the header).
std::atomic<ValidationLayer*> active_layer{nullptr};

// The calling thread's last error, when the layer rather than the driver
// produced it.
struct ThreadError {
  bool from_layer = false;
  std::string message;
};
thread_local ThreadError thread_error;

openreg_status ToDriverStatus(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kFailedPrecondition:
      return OPENREG_ERROR_NOT_INITIALIZED;
    case absl::StatusCode::kOutOfRange:
      return OPENREG_ERROR_INVALID_DEVICE;
    case absl::StatusCode::kInternal:
      return OPENREG_ERROR_INTERNAL;
    default:
      return OPENREG_ERROR_INVALID_ARGUMENT;
  }
}

absl::Status NullArgument(const char* argument) {
  return absl::InvalidArgumentError(absl::StrCat(
      "'", argument, "' is NULL; pass the address of a variable to receive "
      "the result"));
}

// A driver that reports success must hand out what it created.
absl::Status DriverReturnedNothing(const char* what) {
  return absl::InternalError(absl::StrCat(
      "driver bug: the call succeeded but returned a NULL ", what,
      "; a driver must return a valid handle with OPENREG_SUCCESS"));
}

absl::Status CheckKind(int32_t kind) {
  if (kind >= OPENREG_MEMCPY_HOST_TO_HOST &&
      kind <= OPENREG_MEMCPY_DEVICE_TO_DEVICE) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "'kind' is %d; expected an OPENREG_MEMCPY_* value from %d to %d", kind,
      OPENREG_MEMCPY_HOST_TO_HOST, OPENREG_MEMCPY_DEVICE_TO_DEVICE));
}

}  // namespace

// The table's functions: each checks its call against the tracker, forwards
// it when correct and records what it created or destroyed. A check that
// fails returns through Reject with the call spelled out.
struct ValidationCalls {
  static ValidationLayer& Layer() { return *active_layer.load(); }

#define OPENREG_VALIDATE(check, ...)                                       \
  if (absl::Status validation_misuse = (check); !validation_misuse.ok()) { \
    return Layer().Reject(absl::StrFormat(__VA_ARGS__), validation_misuse); \
  }

  static openreg_status Init(const openreg_driver_config* config) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.CheckNotInitialized(), "init(config=%p)",
                     config);
    if (config != nullptr &&
        config->struct_size <
            OPENREG_STRUCT_SIZE(openreg_driver_config, device_count)) {
      OPENREG_VALIDATE(
          absl::InvalidArgumentError(absl::StrFormat(
              "config->struct_size is %d, too small to hold device_count; set "
              "it to OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0",
              config->struct_size)),
          "init(config=%p)", config);
    }
    const openreg_status status = layer.driver_.init(config);
    if (status == OPENREG_SUCCESS) {
      int32_t count = -1;
      if (layer.driver_.get_device_count(&count) != OPENREG_SUCCESS) {
        count = -1;
      }
      layer.tracker_.Initialize(count);
    }
    return layer.Forward(status);
  }

  static openreg_status Shutdown() {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.CheckInitialized(), "shutdown()");
    const openreg_status status = layer.driver_.shutdown();
    if (status == OPENREG_SUCCESS) layer.tracker_.Shutdown();
    return layer.Forward(status);
  }

  static const char* LastErrorMessage() {
    if (thread_error.from_layer) return thread_error.message.c_str();
    return Layer().driver_.last_error_message();
  }

  static openreg_status GetDeviceCount(int32_t* count) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.CheckInitialized(),
                     "get_device_count(count=%p)", count);
    OPENREG_VALIDATE(count ? absl::OkStatus() : NullArgument("count"),
                     "get_device_count(count=NULL)");
    return layer.Forward(layer.driver_.get_device_count(count));
  }

  static openreg_status GetDeviceProperties(int32_t device,
                                            openreg_device_properties* props) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "get_device_properties(device=%d, props=%p)", device,
                     props);
    OPENREG_VALIDATE(props ? absl::OkStatus() : NullArgument("props"),
                     "get_device_properties(device=%d, props=NULL)", device);
    return layer.Forward(layer.driver_.get_device_properties(device, props));
  }

  static openreg_status DeviceMalloc(int32_t device, size_t size, void** ptr) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "device_malloc(device=%d, size=%d, ptr=%p)", device, size,
                     ptr);
    OPENREG_VALIDATE(ptr ? absl::OkStatus() : NullArgument("ptr"),
                     "device_malloc(device=%d, size=%d, ptr=NULL)", device,
                     size);
    const openreg_status status = layer.driver_.device_malloc(device, size, ptr);
    if (status == OPENREG_SUCCESS && size > 0) {
      OPENREG_VALIDATE(
          *ptr ? absl::OkStatus() : DriverReturnedNothing("pointer"),
          "device_malloc(device=%d, size=%d, ptr=%p)", device, size, ptr);
      layer.tracker_.AddDeviceAllocation(*ptr, device, size);
    }
    return layer.Forward(status);
  }

  static openreg_status DeviceFree(int32_t device, void* ptr) {
    ValidationLayer& layer = Layer();
    if (ptr == nullptr) {
      OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                       "device_free(device=%d, ptr=NULL)", device);
      return layer.Forward(layer.driver_.device_free(device, ptr));
    }
    absl::StatusOr<ValidationTracker::Allocation> allocation =
        layer.tracker_.TakeDeviceAllocation(device, ptr);
    OPENREG_VALIDATE(allocation.status(), "device_free(device=%d, ptr=%p)",
                     device, ptr);
    const openreg_status status = layer.driver_.device_free(device, ptr);
    if (status != OPENREG_SUCCESS) {
      layer.tracker_.ReturnAllocation(ptr, *allocation);
    }
    return layer.Forward(status);
  }

  static openreg_status HostMalloc(size_t size, void** ptr) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.CheckInitialized(),
                     "host_malloc(size=%d, ptr=%p)", size, ptr);
    OPENREG_VALIDATE(ptr ? absl::OkStatus() : NullArgument("ptr"),
                     "host_malloc(size=%d, ptr=NULL)", size);
    const openreg_status status = layer.driver_.host_malloc(size, ptr);
    if (status == OPENREG_SUCCESS && size > 0) {
      OPENREG_VALIDATE(
          *ptr ? absl::OkStatus() : DriverReturnedNothing("pointer"),
          "host_malloc(size=%d, ptr=%p)", size, ptr);
      layer.tracker_.AddHostAllocation(*ptr, size);
    }
    return layer.Forward(status);
  }

  static openreg_status HostFree(void* ptr) {
    ValidationLayer& layer = Layer();
    if (ptr == nullptr) {
      OPENREG_VALIDATE(layer.tracker_.CheckInitialized(), "host_free(NULL)");
      return layer.Forward(layer.driver_.host_free(ptr));
    }
    absl::StatusOr<ValidationTracker::Allocation> allocation =
        layer.tracker_.TakeHostAllocation(ptr);
    OPENREG_VALIDATE(allocation.status(), "host_free(ptr=%p)", ptr);
    const openreg_status status = layer.driver_.host_free(ptr);
    if (status != OPENREG_SUCCESS) {
      layer.tracker_.ReturnAllocation(ptr, *allocation);
    }
    return layer.Forward(status);
  }

  static openreg_status PointerGetAttributes(
      const void* ptr, openreg_pointer_attributes* attributes) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.CheckInitialized(),
                     "pointer_get_attributes(ptr=%p, attributes=%p)", ptr,
                     attributes);
    OPENREG_VALIDATE(attributes ? absl::OkStatus() : NullArgument("attributes"),
                     "pointer_get_attributes(ptr=%p, attributes=NULL)", ptr);
    return layer.Forward(layer.driver_.pointer_get_attributes(ptr, attributes));
  }

  static openreg_status MemGetInfo(int32_t device, uint64_t* free_bytes,
                                   uint64_t* total_bytes) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "mem_get_info(device=%d, free_bytes=%p, total_bytes=%p)",
                     device, free_bytes, total_bytes);
    OPENREG_VALIDATE(
        free_bytes == nullptr   ? NullArgument("free_bytes")
        : total_bytes == nullptr ? NullArgument("total_bytes")
                                 : absl::OkStatus(),
        "mem_get_info(device=%d, free_bytes=%p, total_bytes=%p)", device,
        free_bytes, total_bytes);
    return layer.Forward(
        layer.driver_.mem_get_info(device, free_bytes, total_bytes));
  }

  static absl::Status CheckCopy(const ValidationTracker& tracker, void* dst,
                                const void* src, size_t size, int32_t kind,
                                openreg_stream stream) {
    if (absl::Status status = tracker.LiveStream(stream, "stream").status();
        !status.ok()) {
      return status;
    }
    if (absl::Status status = CheckKind(kind); !status.ok()) return status;
    if (size == 0) return absl::OkStatus();
    if (dst == nullptr) return NullArgument("dst");
    if (src == nullptr) return NullArgument("src");
    const bool device_dst = kind == OPENREG_MEMCPY_HOST_TO_DEVICE ||
                            kind == OPENREG_MEMCPY_DEVICE_TO_DEVICE;
    const bool device_src = kind == OPENREG_MEMCPY_DEVICE_TO_HOST ||
                            kind == OPENREG_MEMCPY_DEVICE_TO_DEVICE;
    absl::Status dst_status = device_dst
                                  ? tracker.CheckDeviceRange(dst, size, "dst")
                                  : tracker.CheckHostRange(dst, size, "dst");
    if (!dst_status.ok()) return dst_status;
    return device_src ? tracker.CheckDeviceRange(src, size, "src")
                      : tracker.CheckHostRange(src, size, "src");
  }

  static openreg_status MemcpyAsync(void* dst, const void* src, size_t size,
                                    int32_t kind, openreg_stream stream) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(
        CheckCopy(layer.tracker_, dst, src, size, kind, stream),
        "memcpy_async(dst=%p, src=%p, size=%d, kind=%d, stream=%p)", dst, src,
        size, kind, stream);
    return layer.Forward(
        layer.driver_.memcpy_async(dst, src, size, kind, stream));
  }

  static openreg_status MemsetAsync(void* ptr, int32_t value, size_t size,
                                    openreg_stream stream) {
    ValidationLayer& layer = Layer();
    absl::Status problem = layer.tracker_.LiveStream(stream, "stream").status();
    if (problem.ok() && size > 0) {
      problem = ptr ? layer.tracker_.CheckDeviceRange(ptr, size, "ptr")
                    : NullArgument("ptr");
    }
    OPENREG_VALIDATE(problem,
                     "memset_async(ptr=%p, value=%d, size=%d, stream=%p)", ptr,
                     value, size, stream);
    return layer.Forward(layer.driver_.memset_async(ptr, value, size, stream));
  }

  static openreg_status StreamCreate(int32_t device, int32_t priority,
                                     openreg_stream* stream) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "stream_create(device=%d, priority=%d, stream=%p)",
                     device, priority, stream);
    OPENREG_VALIDATE(stream ? absl::OkStatus() : NullArgument("stream"),
                     "stream_create(device=%d, priority=%d, stream=NULL)",
                     device, priority);
    const openreg_status status =
        layer.driver_.stream_create(device, priority, stream);
    if (status == OPENREG_SUCCESS) {
      OPENREG_VALIDATE(
          *stream ? absl::OkStatus() : DriverReturnedNothing("stream"),
          "stream_create(device=%d, priority=%d, stream=%p)", device, priority,
          stream);
      layer.tracker_.AddStream(*stream, device);
    }
    return layer.Forward(status);
  }

  static openreg_status StreamDestroy(openreg_stream stream) {
    ValidationLayer& layer = Layer();
    absl::StatusOr<int32_t> device = layer.tracker_.TakeStream(stream);
    OPENREG_VALIDATE(device.status(), "stream_destroy(stream=%p)", stream);
    const openreg_status status = layer.driver_.stream_destroy(stream);
    if (status != OPENREG_SUCCESS) layer.tracker_.ReturnStream(stream, *device);
    return layer.Forward(status);
  }

  static openreg_status StreamQuery(openreg_stream stream) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.LiveStream(stream, "stream").status(),
                     "stream_query(stream=%p)", stream);
    return layer.Forward(layer.driver_.stream_query(stream));
  }

  static openreg_status StreamSynchronize(openreg_stream stream) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.LiveStream(stream, "stream").status(),
                     "stream_synchronize(stream=%p)", stream);
    return layer.Forward(layer.driver_.stream_synchronize(stream));
  }

  static openreg_status StreamWaitEvent(openreg_stream stream,
                                        openreg_event event) {
    ValidationLayer& layer = Layer();
    absl::Status problem = layer.tracker_.LiveStream(stream, "stream").status();
    if (problem.ok()) problem = layer.tracker_.LiveEvent(event, "event").status();
    OPENREG_VALIDATE(problem, "stream_wait_event(stream=%p, event=%p)", stream,
                     event);
    return layer.Forward(layer.driver_.stream_wait_event(stream, event));
  }

  // Optional (ABI 1.1): in the layer's table only when the driver has it.
  static openreg_status StreamGetPriority(openreg_stream stream,
                                          int32_t* priority) {
    ValidationLayer& layer = Layer();
    absl::Status problem = layer.tracker_.LiveStream(stream, "stream").status();
    if (problem.ok() && priority == nullptr) problem = NullArgument("priority");
    OPENREG_VALIDATE(problem, "stream_get_priority(stream=%p, priority=%p)",
                     stream, priority);
    return layer.Forward(layer.driver_.stream_get_priority(stream, priority));
  }

  static openreg_status EventCreate(int32_t device, uint32_t flags,
                                    openreg_event* event) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "event_create(device=%d, flags=%#x, event=%p)", device,
                     flags, event);
    OPENREG_VALIDATE(event ? absl::OkStatus() : NullArgument("event"),
                     "event_create(device=%d, flags=%#x, event=NULL)", device,
                     flags);
    const openreg_status status =
        layer.driver_.event_create(device, flags, event);
    if (status == OPENREG_SUCCESS) {
      OPENREG_VALIDATE(
          *event ? absl::OkStatus() : DriverReturnedNothing("event"),
          "event_create(device=%d, flags=%#x, event=%p)", device, flags,
          event);
      layer.tracker_.AddEvent(*event, device, flags);
    }
    return layer.Forward(status);
  }

  static openreg_status EventDestroy(openreg_event event) {
    ValidationLayer& layer = Layer();
    absl::StatusOr<ValidationTracker::EventState> state =
        layer.tracker_.TakeEvent(event);
    OPENREG_VALIDATE(state.status(), "event_destroy(event=%p)", event);
    const openreg_status status = layer.driver_.event_destroy(event);
    if (status != OPENREG_SUCCESS) layer.tracker_.ReturnEvent(event, *state);
    return layer.Forward(status);
  }

  static absl::Status CheckRecord(const ValidationTracker& tracker,
                                  openreg_event event, openreg_stream stream) {
    absl::StatusOr<ValidationTracker::EventState> state =
        tracker.LiveEvent(event, "event");
    if (!state.ok()) return state.status();
    absl::StatusOr<int32_t> stream_device = tracker.LiveStream(stream, "stream");
    if (!stream_device.ok()) return stream_device.status();
    if (state->device == *stream_device) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "the event belongs to device %d but the stream to device %d; record "
        "an event on a stream of its own device (streams of any device may "
        "wait for it with stream_wait_event)",
        state->device, *stream_device));
  }

  static openreg_status EventRecord(openreg_event event,
                                    openreg_stream stream) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(CheckRecord(layer.tracker_, event, stream),
                     "event_record(event=%p, stream=%p)", event, stream);
    const openreg_status status = layer.driver_.event_record(event, stream);
    if (status == OPENREG_SUCCESS) layer.tracker_.MarkRecorded(event);
    return layer.Forward(status);
  }

  static openreg_status EventQuery(openreg_event event) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.LiveEvent(event, "event").status(),
                     "event_query(event=%p)", event);
    return layer.Forward(layer.driver_.event_query(event));
  }

  static openreg_status EventSynchronize(openreg_event event) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.LiveEvent(event, "event").status(),
                     "event_synchronize(event=%p)", event);
    return layer.Forward(layer.driver_.event_synchronize(event));
  }

  static absl::Status CheckTimingEvent(const ValidationTracker& tracker,
                                       openreg_event event,
                                       const char* argument) {
    absl::StatusOr<ValidationTracker::EventState> state =
        tracker.LiveEvent(event, argument);
    if (!state.ok()) return state.status();
    if ((state->flags & OPENREG_EVENT_ENABLE_TIMING) == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "'%s' was created without OPENREG_EVENT_ENABLE_TIMING; create both "
          "events with that flag to time them",
          argument));
    }
    if (!state->recorded) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "'%s' was never recorded; record both events before asking for the "
          "time between them",
          argument));
    }
    return absl::OkStatus();
  }

  static openreg_status EventElapsedTime(openreg_event start,
                                         openreg_event end,
                                         float* milliseconds) {
    ValidationLayer& layer = Layer();
    absl::Status problem = CheckTimingEvent(layer.tracker_, start, "start");
    if (problem.ok()) problem = CheckTimingEvent(layer.tracker_, end, "end");
    if (problem.ok() && milliseconds == nullptr) {
      problem = NullArgument("milliseconds");
    }
    OPENREG_VALIDATE(problem,
                     "event_elapsed_time(start=%p, end=%p, milliseconds=%p)",
                     start, end, milliseconds);
    return layer.Forward(
        layer.driver_.event_elapsed_time(start, end, milliseconds));
  }

  static openreg_status LaunchHostFunc(openreg_stream stream,
                                       openreg_host_fn fn, void* user_data) {
    ValidationLayer& layer = Layer();
    absl::Status problem = layer.tracker_.LiveStream(stream, "stream").status();
    if (problem.ok() && fn == nullptr) {
      problem = absl::InvalidArgumentError(
          "'fn' is NULL; pass the host function to run");
    }
    OPENREG_VALIDATE(problem,
                     "launch_host_func(stream=%p, fn=%p, user_data=%p)",
                     stream, reinterpret_cast<void*>(fn), user_data);
    return layer.Forward(layer.driver_.launch_host_func(stream, fn, user_data));
  }

  static openreg_status DeviceSynchronize(int32_t device) {
    ValidationLayer& layer = Layer();
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "device_synchronize(device=%d)", device);
    return layer.Forward(layer.driver_.device_synchronize(device));
  }

#undef OPENREG_VALIDATE
};

absl::StatusOr<std::unique_ptr<ValidationLayer>> ValidationLayer::Create(
    const openreg_driver_api* driver) {
  std::unique_ptr<ValidationLayer> layer(new ValidationLayer(driver));
  ValidationLayer* expected = nullptr;
  if (!active_layer.compare_exchange_strong(expected, layer.get())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot enable the driver validation layer for driver '",
        driver->driver_name,
        "': another validation layer is active in this process, and only one "
        "driver can be validated at a time. Destroy the other Driver first."));
  }
  return layer;
}

ValidationLayer::ValidationLayer(const openreg_driver_api* driver)
    : driver_(*driver) {
  // The layer offers what the driver offers: a 1.0 driver keeps a 1.0 table,
  // so the core reports its missing 1.1 functions as it would without the
  // layer. The driver's optional entries are read only when its struct_size
  // covers them.
  const bool driver_has_v1_1 =
      driver->struct_size >= OPENREG_DRIVER_API_STRUCT_SIZE_V1_1;
  table_ = openreg_driver_api{
      /*struct_size=*/driver_has_v1_1 ? OPENREG_DRIVER_API_STRUCT_SIZE_V1_1
                                      : OPENREG_DRIVER_API_STRUCT_SIZE_V1_0,
      /*abi_version_major=*/OPENREG_DRIVER_ABI_VERSION_MAJOR,
      /*abi_version_minor=*/driver_has_v1_1 ? 1u : 0u,
      /*driver_name=*/driver->driver_name,
      /*driver_version=*/driver->driver_version,
      /*init=*/ValidationCalls::Init,
      /*shutdown=*/ValidationCalls::Shutdown,
      /*last_error_message=*/ValidationCalls::LastErrorMessage,
      /*get_device_count=*/ValidationCalls::GetDeviceCount,
      /*get_device_properties=*/ValidationCalls::GetDeviceProperties,
      /*device_malloc=*/ValidationCalls::DeviceMalloc,
      /*device_free=*/ValidationCalls::DeviceFree,
      /*host_malloc=*/ValidationCalls::HostMalloc,
      /*host_free=*/ValidationCalls::HostFree,
      /*pointer_get_attributes=*/ValidationCalls::PointerGetAttributes,
      /*mem_get_info=*/ValidationCalls::MemGetInfo,
      /*memcpy_async=*/ValidationCalls::MemcpyAsync,
      /*memset_async=*/ValidationCalls::MemsetAsync,
      /*stream_create=*/ValidationCalls::StreamCreate,
      /*stream_destroy=*/ValidationCalls::StreamDestroy,
      /*stream_query=*/ValidationCalls::StreamQuery,
      /*stream_synchronize=*/ValidationCalls::StreamSynchronize,
      /*stream_wait_event=*/ValidationCalls::StreamWaitEvent,
      /*event_create=*/ValidationCalls::EventCreate,
      /*event_destroy=*/ValidationCalls::EventDestroy,
      /*event_record=*/ValidationCalls::EventRecord,
      /*event_query=*/ValidationCalls::EventQuery,
      /*event_synchronize=*/ValidationCalls::EventSynchronize,
      /*event_elapsed_time=*/ValidationCalls::EventElapsedTime,
      /*launch_host_func=*/ValidationCalls::LaunchHostFunc,
      /*device_synchronize=*/ValidationCalls::DeviceSynchronize,
      /*stream_get_priority=*/
      driver_has_v1_1 && driver->stream_get_priority != nullptr
          ? ValidationCalls::StreamGetPriority
          : nullptr,
  };
}

ValidationLayer::~ValidationLayer() {
  ValidationLayer* self = this;
  active_layer.compare_exchange_strong(self, nullptr);
}

std::string ValidationLayer::first_misuse() const {
  absl::MutexLock lock(&first_misuse_mutex_);
  return first_misuse_;
}

openreg_status ValidationLayer::Reject(const std::string& call,
                                       const absl::Status& problem) {
  std::string message =
      absl::StrCat("openreg driver validation: ", call, ": ", problem.message());
  bool first = false;
  {
    absl::MutexLock lock(&first_misuse_mutex_);
    if (first_misuse_.empty()) {
      first_misuse_ = message;
      first = true;
    }
  }
  if (first) {
    std::fprintf(stderr,
                 "%s\n(the first misuse found by OPENREG_DRIVER_VALIDATION=1; "
                 "it and any later ones return an error to the caller)\n",
                 message.c_str());
  }
  thread_error.from_layer = true;
  thread_error.message = std::move(message);
  return ToDriverStatus(problem.code());
}

openreg_status ValidationLayer::Forward(openreg_status status) {
  thread_error.from_layer = false;
  return status;
}

}  // namespace openreg
