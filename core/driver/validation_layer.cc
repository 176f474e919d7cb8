#include "core/driver/validation_layer.h"

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/driver/tracked_objects.h"

namespace openreg {
namespace {

// Every live layer, by its context: a C call carries only the context, and
// the layer must tell a live context from a destroyed or made-up one before
// touching it. A registry of what exists, not a current state. Validation
// only; the layer is off on the fast path.
// Thread-safety: `mutex` guards `layers` and is held only for a lookup, an
// add or a removal. A layer found here stays alive for the rest of the call
// without the lock, because the ABI forbids destroying a context (which
// unregisters its layer) while another call on it is in flight.
struct LayerRegistry {
  // Destroyed contexts remembered, to name a use after context_destroy.
  static constexpr size_t kGraveyardCapacity = 64;
  absl::Mutex mutex;
  TrackedObjects<openreg_context, ValidationLayer*> layers
      ABSL_GUARDED_BY(mutex){kGraveyardCapacity};
};

LayerRegistry& Registry() {
  // Never destroyed: a Driver may be destroyed during exit.
  static auto* registry = new LayerRegistry;
  return *registry;
}

absl::StatusOr<ValidationLayer*> FindLayer(openreg_context context) {
  if (context == nullptr) {
    return absl::InvalidArgumentError(
        "'context' is NULL; pass the context ValidationLayer::context() "
        "returned");
  }
  LayerRegistry& registry = Registry();
  absl::ReaderMutexLock lock(&registry.mutex);
  if (ValidationLayer* const* layer = registry.layers.FindLive(context)) {
    return *layer;
  }
  if (registry.layers.FindDestroyed(context) != nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'context' %p was destroyed by context_destroy earlier; a destroyed "
        "context must not be used again",
        context));
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("'context' %p is not a context of the validation layer: "
                      "ValidationLayer::context() never returned it",
                      context));
}

// The calling thread's last error, when the layer rather than the driver
// produced it.
struct ThreadError {
  bool from_layer = false;
  std::string message;
};
thread_local ThreadError thread_error;

openreg_status ToDriverStatus(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOutOfRange:
      return OPENREG_ERROR_INVALID_DEVICE;
    case absl::StatusCode::kInternal:
      return OPENREG_ERROR_INTERNAL;
    case absl::StatusCode::kUnimplemented:
      return OPENREG_ERROR_NOT_SUPPORTED;
    default:
      return OPENREG_ERROR_INVALID_ARGUMENT;
  }
}

std::string MisuseMessage(absl::string_view call, const absl::Status& problem) {
  return absl::StrCat("openreg driver validation: ", call, ": ",
                      problem.message());
}

// A misuse with no layer to record it: the context itself is wrong.
openreg_status RejectContext(absl::string_view call,
                             const absl::Status& problem) {
  thread_error.from_layer = true;
  thread_error.message = MisuseMessage(call, problem);
  return ToDriverStatus(problem.code());
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

// The table's functions, named as the ABI names them so that the table can
// be generated from its function list: each finds its layer by the context,
// checks its call against the layer's tracker, forwards it when correct and
// records what it created or destroyed. A check that fails returns through
// Reject with the call spelled out.
struct ValidationCalls {
#define OPENREG_VALIDATE(check, ...)                                       \
  if (absl::Status validation_misuse = (check); !validation_misuse.ok()) { \
    return layer.Reject(absl::StrFormat(__VA_ARGS__), validation_misuse);  \
  }

// Declares `layer`, the layer of `context`, or rejects the call.
#define OPENREG_FIND_LAYER(context, function)                                  \
  absl::StatusOr<ValidationLayer*> found_layer = FindLayer(context);           \
  if (!found_layer.ok()) {                                                     \
    return RejectContext(absl::StrFormat("%s(context=%p)", function, context), \
                         found_layer.status());                                \
  }                                                                            \
  ValidationLayer& layer = **found_layer

  static openreg_status context_create(const openreg_driver_config* config,
                                       openreg_context* context) {
    if (context != nullptr) *context = nullptr;
    return RejectContext(
        absl::StrFormat("context_create(config=%p, context=%p)", config,
                        context),
        absl::UnimplementedError(
            "the validation layer's table cannot create a context (it would "
            "not know which driver to wrap); create the driver's context and "
            "wrap it with ValidationLayer::Wrap"));
  }

  static openreg_status context_destroy(openreg_context context) {
    OPENREG_FIND_LAYER(context, "context_destroy");
    {
      absl::MutexLock lock(&Registry().mutex);
      Registry().layers.Destroy(context);
    }
    const openreg_status status =
        layer.driver_.context_destroy(layer.driver_context_);
    if (status != OPENREG_SUCCESS) {
      absl::MutexLock lock(&Registry().mutex);
      Registry().layers.Add(context, &layer);
      return layer.Forward(status);
    }
    layer.driver_context_live_.store(false);
    layer.tracker_.DestroyAll();
    return layer.Forward(status);
  }

  static const char* last_error_message(openreg_context context) {
    if (thread_error.from_layer) return thread_error.message.c_str();
    absl::StatusOr<ValidationLayer*> layer = FindLayer(context);
    if (!layer.ok()) return "";
    return (*layer)->driver_.last_error_message((*layer)->driver_context_);
  }

  static openreg_status get_device_count(openreg_context context,
                                         int32_t* count) {
    OPENREG_FIND_LAYER(context, "get_device_count");
    OPENREG_VALIDATE(count ? absl::OkStatus() : NullArgument("count"),
                     "get_device_count(count=NULL)");
    return layer.Forward(
        layer.driver_.get_device_count(layer.driver_context_, count));
  }

  static openreg_status get_device_properties(
      openreg_context context, int32_t device,
      openreg_device_properties* props) {
    OPENREG_FIND_LAYER(context, "get_device_properties");
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "get_device_properties(device=%d, props=%p)", device,
                     props);
    OPENREG_VALIDATE(props ? absl::OkStatus() : NullArgument("props"),
                     "get_device_properties(device=%d, props=NULL)", device);
    return layer.Forward(layer.driver_.get_device_properties(
        layer.driver_context_, device, props));
  }

  static openreg_status device_malloc(openreg_context context, int32_t device,
                                      size_t size, void** ptr) {
    OPENREG_FIND_LAYER(context, "device_malloc");
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "device_malloc(device=%d, size=%d, ptr=%p)", device, size,
                     ptr);
    OPENREG_VALIDATE(ptr ? absl::OkStatus() : NullArgument("ptr"),
                     "device_malloc(device=%d, size=%d, ptr=NULL)", device,
                     size);
    const openreg_status status =
        layer.driver_.device_malloc(layer.driver_context_, device, size, ptr);
    if (status == OPENREG_SUCCESS && size > 0) {
      OPENREG_VALIDATE(
          *ptr ? absl::OkStatus() : DriverReturnedNothing("pointer"),
          "device_malloc(device=%d, size=%d, ptr=%p)", device, size, ptr);
      layer.tracker_.AddDeviceAllocation(*ptr, device, size);
    }
    return layer.Forward(status);
  }

  static openreg_status device_free(openreg_context context, int32_t device,
                                    void* ptr) {
    OPENREG_FIND_LAYER(context, "device_free");
    if (ptr == nullptr) {
      OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                       "device_free(device=%d, ptr=NULL)", device);
      return layer.Forward(
          layer.driver_.device_free(layer.driver_context_, device, ptr));
    }
    absl::StatusOr<ValidationTracker::Allocation> allocation =
        layer.tracker_.TakeDeviceAllocation(device, ptr);
    OPENREG_VALIDATE(allocation.status(), "device_free(device=%d, ptr=%p)",
                     device, ptr);
    const openreg_status status =
        layer.driver_.device_free(layer.driver_context_, device, ptr);
    if (status != OPENREG_SUCCESS) {
      layer.tracker_.ReturnAllocation(ptr, *allocation);
    }
    return layer.Forward(status);
  }

  static openreg_status host_malloc(openreg_context context, size_t size,
                                    void** ptr) {
    OPENREG_FIND_LAYER(context, "host_malloc");
    OPENREG_VALIDATE(ptr ? absl::OkStatus() : NullArgument("ptr"),
                     "host_malloc(size=%d, ptr=NULL)", size);
    const openreg_status status =
        layer.driver_.host_malloc(layer.driver_context_, size, ptr);
    if (status == OPENREG_SUCCESS && size > 0) {
      OPENREG_VALIDATE(
          *ptr ? absl::OkStatus() : DriverReturnedNothing("pointer"),
          "host_malloc(size=%d, ptr=%p)", size, ptr);
      layer.tracker_.AddHostAllocation(*ptr, size);
    }
    return layer.Forward(status);
  }

  static openreg_status host_free(openreg_context context, void* ptr) {
    OPENREG_FIND_LAYER(context, "host_free");
    if (ptr == nullptr) {
      return layer.Forward(layer.driver_.host_free(layer.driver_context_, ptr));
    }
    absl::StatusOr<ValidationTracker::Allocation> allocation =
        layer.tracker_.TakeHostAllocation(ptr);
    OPENREG_VALIDATE(allocation.status(), "host_free(ptr=%p)", ptr);
    const openreg_status status =
        layer.driver_.host_free(layer.driver_context_, ptr);
    if (status != OPENREG_SUCCESS) {
      layer.tracker_.ReturnAllocation(ptr, *allocation);
    }
    return layer.Forward(status);
  }

  static openreg_status pointer_get_attributes(
      openreg_context context, const void* ptr,
      openreg_pointer_attributes* attributes) {
    OPENREG_FIND_LAYER(context, "pointer_get_attributes");
    OPENREG_VALIDATE(attributes ? absl::OkStatus() : NullArgument("attributes"),
                     "pointer_get_attributes(ptr=%p, attributes=NULL)", ptr);
    return layer.Forward(layer.driver_.pointer_get_attributes(
        layer.driver_context_, ptr, attributes));
  }

  static openreg_status mem_get_info(openreg_context context, int32_t device,
                                     uint64_t* free_bytes,
                                     uint64_t* total_bytes) {
    OPENREG_FIND_LAYER(context, "mem_get_info");
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "mem_get_info(device=%d, free_bytes=%p, total_bytes=%p)",
                     device, free_bytes, total_bytes);
    OPENREG_VALIDATE(
        free_bytes == nullptr   ? NullArgument("free_bytes")
        : total_bytes == nullptr ? NullArgument("total_bytes")
                                 : absl::OkStatus(),
        "mem_get_info(device=%d, free_bytes=%p, total_bytes=%p)", device,
        free_bytes, total_bytes);
    return layer.Forward(layer.driver_.mem_get_info(
        layer.driver_context_, device, free_bytes, total_bytes));
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

  static openreg_status memcpy_async(openreg_context context, void* dst,
                                     const void* src, size_t size, int32_t kind,
                                     openreg_stream stream) {
    OPENREG_FIND_LAYER(context, "memcpy_async");
    OPENREG_VALIDATE(
        CheckCopy(layer.tracker_, dst, src, size, kind, stream),
        "memcpy_async(dst=%p, src=%p, size=%d, kind=%d, stream=%p)", dst, src,
        size, kind, stream);
    return layer.Forward(layer.driver_.memcpy_async(layer.driver_context_, dst,
                                                    src, size, kind, stream));
  }

  static openreg_status memset_async(openreg_context context, void* ptr,
                                     int32_t value, size_t size,
                                     openreg_stream stream) {
    OPENREG_FIND_LAYER(context, "memset_async");
    absl::Status problem = layer.tracker_.LiveStream(stream, "stream").status();
    if (problem.ok() && size > 0) {
      problem = ptr ? layer.tracker_.CheckDeviceRange(ptr, size, "ptr")
                    : NullArgument("ptr");
    }
    OPENREG_VALIDATE(problem,
                     "memset_async(ptr=%p, value=%d, size=%d, stream=%p)", ptr,
                     value, size, stream);
    return layer.Forward(layer.driver_.memset_async(layer.driver_context_, ptr,
                                                    value, size, stream));
  }

  static openreg_status stream_create(openreg_context context, int32_t device,
                                      int32_t priority,
                                      openreg_stream* stream) {
    OPENREG_FIND_LAYER(context, "stream_create");
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "stream_create(device=%d, priority=%d, stream=%p)",
                     device, priority, stream);
    OPENREG_VALIDATE(stream ? absl::OkStatus() : NullArgument("stream"),
                     "stream_create(device=%d, priority=%d, stream=NULL)",
                     device, priority);
    const openreg_status status = layer.driver_.stream_create(
        layer.driver_context_, device, priority, stream);
    if (status == OPENREG_SUCCESS) {
      OPENREG_VALIDATE(
          *stream ? absl::OkStatus() : DriverReturnedNothing("stream"),
          "stream_create(device=%d, priority=%d, stream=%p)", device, priority,
          stream);
      layer.tracker_.AddStream(*stream, device);
    }
    return layer.Forward(status);
  }

  static openreg_status stream_destroy(openreg_context context,
                                       openreg_stream stream) {
    OPENREG_FIND_LAYER(context, "stream_destroy");
    absl::StatusOr<int32_t> device = layer.tracker_.TakeStream(stream);
    OPENREG_VALIDATE(device.status(), "stream_destroy(stream=%p)", stream);
    const openreg_status status =
        layer.driver_.stream_destroy(layer.driver_context_, stream);
    if (status != OPENREG_SUCCESS) layer.tracker_.ReturnStream(stream, *device);
    return layer.Forward(status);
  }

  static absl::Status CheckLive(const ValidationTracker& tracker,
                                openreg_stream stream) {
    return tracker.LiveStream(stream, "stream").status();
  }
  static absl::Status CheckLive(const ValidationTracker& tracker,
                                openreg_event event) {
    return tracker.LiveEvent(event, "event").status();
  }

  // The calls whose one argument is a stream or an event (query and
  // synchronize): the handle must be live; `argument` is its name.
  template <typename Handle>
  static openreg_status ForwardOnLive(
      openreg_context context, const char* function, const char* argument,
      Handle handle,
      openreg_status (*openreg_driver_api::*call)(openreg_context, Handle)) {
    OPENREG_FIND_LAYER(context, function);
    OPENREG_VALIDATE(CheckLive(layer.tracker_, handle), "%s(%s=%p)", function,
                     argument, handle);
    return layer.Forward((layer.driver_.*call)(layer.driver_context_, handle));
  }

  static openreg_status stream_query(openreg_context context,
                                     openreg_stream stream) {
    return ForwardOnLive(context, "stream_query", "stream", stream,
                         &openreg_driver_api::stream_query);
  }

  static openreg_status stream_synchronize(openreg_context context,
                                           openreg_stream stream) {
    return ForwardOnLive(context, "stream_synchronize", "stream", stream,
                         &openreg_driver_api::stream_synchronize);
  }

  static openreg_status stream_wait_event(openreg_context context,
                                          openreg_stream stream,
                                          openreg_event event) {
    OPENREG_FIND_LAYER(context, "stream_wait_event");
    absl::Status problem = layer.tracker_.LiveStream(stream, "stream").status();
    if (problem.ok()) {
      problem = layer.tracker_.LiveEvent(event, "event").status();
    }
    OPENREG_VALIDATE(problem, "stream_wait_event(stream=%p, event=%p)", stream,
                     event);
    return layer.Forward(
        layer.driver_.stream_wait_event(layer.driver_context_, stream, event));
  }

  static openreg_status stream_get_priority(openreg_context context,
                                            openreg_stream stream,
                                            int32_t* priority) {
    OPENREG_FIND_LAYER(context, "stream_get_priority");
    absl::Status problem = layer.tracker_.LiveStream(stream, "stream").status();
    if (problem.ok() && priority == nullptr) problem = NullArgument("priority");
    OPENREG_VALIDATE(problem, "stream_get_priority(stream=%p, priority=%p)",
                     stream, priority);
    return layer.Forward(layer.driver_.stream_get_priority(
        layer.driver_context_, stream, priority));
  }

  static openreg_status event_create(openreg_context context, int32_t device,
                                     uint32_t flags, openreg_event* event) {
    OPENREG_FIND_LAYER(context, "event_create");
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "event_create(device=%d, flags=%#x, event=%p)", device,
                     flags, event);
    OPENREG_VALIDATE(event ? absl::OkStatus() : NullArgument("event"),
                     "event_create(device=%d, flags=%#x, event=NULL)", device,
                     flags);
    const openreg_status status =
        layer.driver_.event_create(layer.driver_context_, device, flags, event);
    if (status == OPENREG_SUCCESS) {
      OPENREG_VALIDATE(
          *event ? absl::OkStatus() : DriverReturnedNothing("event"),
          "event_create(device=%d, flags=%#x, event=%p)", device, flags,
          event);
      layer.tracker_.AddEvent(*event, device, flags);
    }
    return layer.Forward(status);
  }

  static openreg_status event_destroy(openreg_context context,
                                      openreg_event event) {
    OPENREG_FIND_LAYER(context, "event_destroy");
    absl::StatusOr<ValidationTracker::EventState> state =
        layer.tracker_.TakeEvent(event);
    OPENREG_VALIDATE(state.status(), "event_destroy(event=%p)", event);
    const openreg_status status =
        layer.driver_.event_destroy(layer.driver_context_, event);
    if (status != OPENREG_SUCCESS) layer.tracker_.ReturnEvent(event, *state);
    return layer.Forward(status);
  }

  static absl::Status CheckRecord(const ValidationTracker& tracker,
                                  openreg_event event, openreg_stream stream) {
    absl::StatusOr<ValidationTracker::EventState> state =
        tracker.LiveEvent(event, "event");
    if (!state.ok()) return state.status();
    absl::StatusOr<int32_t> stream_device =
        tracker.LiveStream(stream, "stream");
    if (!stream_device.ok()) return stream_device.status();
    if (state->device == *stream_device) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "the event belongs to device %d but the stream to device %d; record "
        "an event on a stream of its own device (streams of any device may "
        "wait for it with stream_wait_event)",
        state->device, *stream_device));
  }

  static openreg_status event_record(openreg_context context,
                                     openreg_event event,
                                     openreg_stream stream) {
    OPENREG_FIND_LAYER(context, "event_record");
    OPENREG_VALIDATE(CheckRecord(layer.tracker_, event, stream),
                     "event_record(event=%p, stream=%p)", event, stream);
    const openreg_status status =
        layer.driver_.event_record(layer.driver_context_, event, stream);
    if (status == OPENREG_SUCCESS) layer.tracker_.MarkRecorded(event);
    return layer.Forward(status);
  }

  static openreg_status event_query(openreg_context context,
                                    openreg_event event) {
    return ForwardOnLive(context, "event_query", "event", event,
                         &openreg_driver_api::event_query);
  }

  static openreg_status event_synchronize(openreg_context context,
                                          openreg_event event) {
    return ForwardOnLive(context, "event_synchronize", "event", event,
                         &openreg_driver_api::event_synchronize);
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

  static openreg_status event_elapsed_time(openreg_context context,
                                           openreg_event start,
                                           openreg_event end,
                                           float* milliseconds) {
    OPENREG_FIND_LAYER(context, "event_elapsed_time");
    absl::Status problem = CheckTimingEvent(layer.tracker_, start, "start");
    if (problem.ok()) problem = CheckTimingEvent(layer.tracker_, end, "end");
    if (problem.ok() && milliseconds == nullptr) {
      problem = NullArgument("milliseconds");
    }
    OPENREG_VALIDATE(problem,
                     "event_elapsed_time(start=%p, end=%p, milliseconds=%p)",
                     start, end, milliseconds);
    return layer.Forward(layer.driver_.event_elapsed_time(
        layer.driver_context_, start, end, milliseconds));
  }

  static openreg_status launch_host_func(openreg_context context,
                                         openreg_stream stream,
                                         openreg_host_fn fn, void* user_data) {
    OPENREG_FIND_LAYER(context, "launch_host_func");
    absl::Status problem = layer.tracker_.LiveStream(stream, "stream").status();
    if (problem.ok() && fn == nullptr) {
      problem = absl::InvalidArgumentError(
          "'fn' is NULL; pass the host function to run");
    }
    OPENREG_VALIDATE(problem,
                     "launch_host_func(stream=%p, fn=%p, user_data=%p)",
                     stream, reinterpret_cast<void*>(fn), user_data);
    return layer.Forward(layer.driver_.launch_host_func(layer.driver_context_,
                                                        stream, fn, user_data));
  }

  static openreg_status device_synchronize(openreg_context context,
                                           int32_t device) {
    OPENREG_FIND_LAYER(context, "device_synchronize");
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "device_synchronize(device=%d)", device);
    return layer.Forward(
        layer.driver_.device_synchronize(layer.driver_context_, device));
  }

  // A wrapped driver without the 2.1 function has offset 0 (its device
  // memory is host-accessible); one that has it must report each device's
  // offset the same every time.
  static openreg_status device_execution_offset(openreg_context context,
                                                int32_t device,
                                                intptr_t* offset) {
    OPENREG_FIND_LAYER(context, "device_execution_offset");
    OPENREG_VALIDATE(layer.tracker_.CheckDevice(device),
                     "device_execution_offset(device=%d, offset=%p)", device,
                     offset);
    OPENREG_VALIDATE(offset ? absl::OkStatus() : NullArgument("offset"),
                     "device_execution_offset(device=%d, offset=NULL)", device);
    const openreg_driver_api& driver = layer.driver_;
    if (driver.struct_size < OPENREG_DRIVER_API_STRUCT_SIZE_V2_1 ||
        driver.device_execution_offset == nullptr) {
      *offset = 0;
      return OPENREG_SUCCESS;
    }
    const openreg_status status =
        driver.device_execution_offset(layer.driver_context_, device, offset);
    if (status != OPENREG_SUCCESS) return layer.Forward(status);
    OPENREG_VALIDATE(layer.tracker_.RecordExecutionOffset(device, *offset),
                     "device_execution_offset(device=%d)", device);
    return OPENREG_SUCCESS;
  }

  // The activity group (2.2) is in the layer's table only when the driver
  // has it (see the constructor); records go straight from the driver to the
  // caller's function, whose handles the layer need not translate since it
  // passes the driver's streams through.
  static openreg_status activity_enable(openreg_context context,
                                        openreg_activity_fn fn,
                                        void* user_data) {
    OPENREG_FIND_LAYER(context, "activity_enable");
    return layer.Forward(
        layer.driver_.activity_enable(layer.driver_context_, fn, user_data));
  }

  static openreg_status activity_set_correlation_id(openreg_context context,
                                                    uint64_t correlation_id) {
    OPENREG_FIND_LAYER(context, "activity_set_correlation_id");
    return layer.Forward(layer.driver_.activity_set_correlation_id(
        layer.driver_context_, correlation_id));
  }

  static openreg_status activity_get_timestamp(openreg_context context,
                                               uint64_t* timestamp_ns) {
    OPENREG_FIND_LAYER(context, "activity_get_timestamp");
    OPENREG_VALIDATE(
        timestamp_ns ? absl::OkStatus() : NullArgument("timestamp_ns"),
        "activity_get_timestamp(timestamp_ns=NULL)");
    return layer.Forward(layer.driver_.activity_get_timestamp(
        layer.driver_context_, timestamp_ns));
  }

#undef OPENREG_FIND_LAYER
#undef OPENREG_VALIDATE
};

// Each entry is the ValidationCalls function of the same name.
#define OPENREG_VALIDATION_ENTRY(minor, return_type, name, params) \
  .name = ValidationCalls::name,

absl::StatusOr<std::unique_ptr<ValidationLayer>> ValidationLayer::Wrap(
    const openreg_driver_api& driver, openreg_context driver_context) {
  if (driver_context == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot wrap a NULL context of driver '", driver.driver_name,
        "' in the validation layer; create the context first"));
  }
  // The device count bounds every device index the layer checks.
  int32_t device_count = 0;
  if (const openreg_status status =
          driver.get_device_count(driver_context, &device_count);
      status != OPENREG_SUCCESS) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot enable the driver validation layer: driver '",
        driver.driver_name, "' failed get_device_count with status ", status,
        ": ", driver.last_error_message(driver_context)));
  }
  std::unique_ptr<ValidationLayer> layer(
      new ValidationLayer(driver, driver_context, device_count));
  absl::MutexLock lock(&Registry().mutex);
  Registry().layers.Add(layer->context(), layer.get());
  return layer;
}

ValidationLayer::ValidationLayer(const openreg_driver_api& driver,
                                 openreg_context driver_context,
                                 int32_t device_count)
    : driver_(driver),
      driver_context_(driver_context),
      // The optional activity group stays absent when the driver lacks it,
      // so callers find the feature missing as they would without the layer
      // (its functions would have nothing to forward to).
      table_([&driver] {
        openreg_driver_api table{
            .struct_size = sizeof(openreg_driver_api),
            .abi_version_major = OPENREG_DRIVER_ABI_VERSION_MAJOR,
            .abi_version_minor = OPENREG_DRIVER_ABI_VERSION_MINOR,
            .driver_name = driver.driver_name,
            .driver_version = driver.driver_version,
            OPENREG_DRIVER_FUNCTIONS(OPENREG_VALIDATION_ENTRY)};
        if (!openreg_driver_has_activity_recording(&driver)) {
          table.activity_enable = nullptr;
          table.activity_set_correlation_id = nullptr;
          table.activity_get_timestamp = nullptr;
        }
        return table;
      }()),
      tracker_(device_count) {}

#undef OPENREG_VALIDATION_ENTRY

ValidationLayer::~ValidationLayer() {
  if (driver_context_live_.load()) {
    driver_.context_destroy(driver_context_);
  }
  absl::MutexLock lock(&Registry().mutex);
  Registry().layers.Destroy(context());
}

openreg_context ValidationLayer::context() const {
  return reinterpret_cast<openreg_context>(const_cast<ValidationLayer*>(this));
}

std::string ValidationLayer::first_misuse() const {
  absl::MutexLock lock(&first_misuse_mutex_);
  return first_misuse_;
}

openreg_status ValidationLayer::Reject(const std::string& call,
                                       const absl::Status& problem) {
  std::string message = MisuseMessage(call, problem);
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
