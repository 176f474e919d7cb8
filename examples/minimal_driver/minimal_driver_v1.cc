// The minimal driver as written for driver ABI 1.0 (openreg_driver_v1.h),
// kept at 1.0 on purpose: it proves that drivers written for major 1 keep
// working, through the core's adapter (core/driver/v1_adapter.h). Its 2.0
// twin, minimal_driver.cc, is the worked example of docs/writing_a_driver.md;
// the two differ only in how they hold their state (here: one process-wide
// instance between init and shutdown) and in their table. It passes the
// whole conformance suite and trains examples/train.py.
//
// Execution is synchronous: every copy, memset and host function runs on the
// calling thread before the call returns, so streams and events are just
// bookkeeping, stream_wait_event has nothing to wait for, and a failing host
// function is reported by launch_host_func itself (the ABI allows that).
// Device memory is host memory from the C++ heap, with a capacity enforced by
// counting bytes.
//
// It includes only the ABI header and the C++ standard library, and exports
// one symbol, the entry point.
//
// Thread-safety: one mutex guards all state. It is never held while a host
// function runs or data is copied, because host functions may call back into
// the driver. Instead each stream has a mutex held while its work runs, so
// items of one stream never overlap even when several threads launch them;
// it is recursive because a host function may enqueue on its own stream.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "driver_abi/openreg_driver_v1.h"

namespace {

constexpr int32_t kDefaultDeviceCount = 2;
constexpr uint64_t kDefaultDeviceMemory = uint64_t{4} << 30;  // 4 GiB
constexpr size_t kAlignment = 256;                            // the ABI's minimum

// A reader or writer touches a field only when struct_size covers it.
#define HAS_FIELD(type, object, field) \
  ((object)->struct_size >= OPENREG_STRUCT_SIZE(type, field))

// --- Errors: a per-thread message for last_error_message ------------------

thread_local std::string last_error;

openreg_status Fail(openreg_status status, const std::string& message) {
  last_error = "minimal_driver_v1: " + message;
  return status;
}

openreg_status NullArgument(const char* function, const char* argument) {
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              std::string(function) + ": '" + argument + "' is NULL");
}

// --- State ------------------------------------------------------------------

struct Allocation {
  int32_t device;  // -1 for pinned host memory
  size_t size;
};

struct Stream {
  int32_t device;
  std::recursive_mutex running;  // held while an item of the stream runs
};

struct Event {
  int32_t device;
  uint32_t flags;
  bool recorded = false;
  std::chrono::steady_clock::time_point completed;  // of the latest record
};

struct State {
  std::mutex mu;
  bool initialized = false;
  int32_t device_count = 0;
  uint64_t capacity = 0;
  std::vector<uint64_t> used;                   // bytes per device
  std::map<uintptr_t, Allocation> allocations;  // by base address
  // Handles are numbers, never reused, so a handle that died (even in an
  // earlier init) can never alias a new one.
  uint64_t next_handle = 1;
  // shared_ptr: work keeps its stream alive while it runs unlocked.
  std::unordered_map<uint64_t, std::shared_ptr<Stream>> streams;
  std::unordered_map<uint64_t, Event> events;
};

// Never destroyed: the process may exit while other threads still call in.
State& state = *new State;

uint64_t HandleId(const void* handle) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
}
template <typename Handle>
Handle NewHandle() {
  return reinterpret_cast<Handle>(static_cast<uintptr_t>(state.next_handle++));
}

// The checks below expect state.mu to be held.

openreg_status CheckInitialized(const char* function) {
  if (state.initialized) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_NOT_INITIALIZED,
              std::string(function) + ": the driver is not initialized; call "
                                      "init first");
}

openreg_status CheckDevice(const char* function, int32_t device) {
  if (openreg_status status = CheckInitialized(function)) return status;
  if (device >= 0 && device < state.device_count) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_INVALID_DEVICE,
              std::string(function) + ": device " + std::to_string(device) +
                  " does not exist; valid devices are 0 to " +
                  std::to_string(state.device_count - 1));
}

// A live stream, or null after setting the error.
std::shared_ptr<Stream> FindStream(const char* function,
                                   openreg_stream stream) {
  auto it = state.streams.find(HandleId(stream));
  if (it != state.streams.end()) return it->second;
  Fail(OPENREG_ERROR_INVALID_ARGUMENT,
       std::string(function) + ": unknown or destroyed stream");
  return nullptr;
}

Event* FindEvent(const char* function, openreg_event event) {
  auto it = state.events.find(HandleId(event));
  if (it != state.events.end()) return &it->second;
  Fail(OPENREG_ERROR_INVALID_ARGUMENT,
       std::string(function) + ": unknown or destroyed event");
  return nullptr;
}

// The live allocation containing `ptr`, or end().
std::map<uintptr_t, Allocation>::iterator Containing(const void* ptr) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  auto it = state.allocations.upper_bound(address);
  if (it == state.allocations.begin()) return state.allocations.end();
  --it;
  return address - it->first < it->second.size ? it
                                                : state.allocations.end();
}

// [ptr, ptr + size) lies inside one device allocation.
bool IsDeviceRange(const void* ptr, size_t size) {
  auto it = Containing(ptr);
  return it != state.allocations.end() && it->second.device >= 0 &&
         reinterpret_cast<uintptr_t>(ptr) - it->first + size <=
             it->second.size;
}

// --- Lifecycle --------------------------------------------------------------

openreg_status Init(const openreg_driver_config* config) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.initialized) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "init: already initialized; call shutdown first");
  }
  int32_t device_count = kDefaultDeviceCount;
  uint64_t capacity = kDefaultDeviceMemory;
  if (config != nullptr) {
    if (!HAS_FIELD(openreg_driver_config, config, device_count)) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  "init: config->struct_size is too small; set it to "
                  "OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0");
    }
    if (config->device_count < 0) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  "init: device_count is negative; pass 0 for the default");
    }
    if (config->device_count > 0) device_count = config->device_count;
    if (HAS_FIELD(openreg_driver_config, config, device_memory_bytes) &&
        config->device_memory_bytes > 0) {
      capacity = config->device_memory_bytes;
    }
    // Options are "key=value" pairs separated by commas; this driver knows
    // no key, so anything but blanks and commas is an unknown one.
    const char* options =
        HAS_FIELD(openreg_driver_config, config, options) ? config->options
                                                          : nullptr;
    if (options != nullptr && options[std::strspn(options, " ,")] != '\0') {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  std::string("init: unknown option in '") + options +
                      "'; this driver takes no options");
    }
  }
  state.initialized = true;
  state.device_count = device_count;
  state.capacity = capacity;
  state.used.assign(device_count, 0);
  return OPENREG_SUCCESS;
}

openreg_status Shutdown() {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized("shutdown")) return status;
  for (const auto& [address, allocation] : state.allocations) {
    std::free(reinterpret_cast<void*>(address));
  }
  state.allocations.clear();
  state.streams.clear();
  state.events.clear();
  state.initialized = false;
  return OPENREG_SUCCESS;
}

const char* LastErrorMessage() { return last_error.c_str(); }

// --- Devices ----------------------------------------------------------------

openreg_status GetDeviceCount(int32_t* count) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized("get_device_count")) {
    return status;
  }
  if (count == nullptr) return NullArgument("get_device_count", "count");
  *count = state.device_count;
  return OPENREG_SUCCESS;
}

openreg_status GetDeviceProperties(int32_t device,
                                   openreg_device_properties* props) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckDevice("get_device_properties", device)) {
    return status;
  }
  if (props == nullptr) return NullArgument("get_device_properties", "props");
  if (!HAS_FIELD(openreg_device_properties, props, name)) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "get_device_properties: props->struct_size is too small; set "
                "it to OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0");
  }
  std::snprintf(props->name, sizeof(props->name), "openreg minimal device");
  if (HAS_FIELD(openreg_device_properties, props, total_memory_bytes)) {
    props->total_memory_bytes = state.capacity;
  }
  // One priority, and one stream executing at a time: nothing to schedule.
  if (HAS_FIELD(openreg_device_properties, props, greatest_stream_priority)) {
    props->least_stream_priority = 0;
    props->greatest_stream_priority = 0;
  }
  if (HAS_FIELD(openreg_device_properties, props, concurrent_streams)) {
    props->concurrent_streams = 1;
  }
  return OPENREG_SUCCESS;
}

// --- Memory -----------------------------------------------------------------

openreg_status Allocate(const char* function, int32_t device, size_t size,
                        void** ptr) {
  if (ptr == nullptr) return NullArgument(function, "ptr");
  *ptr = nullptr;
  if (size == 0) return OPENREG_SUCCESS;
  if (device >= 0 && size > state.capacity - state.used[device]) {
    return Fail(OPENREG_ERROR_OUT_OF_MEMORY,
                std::string(function) + ": device " + std::to_string(device) +
                    " out of memory: " + std::to_string(size) +
                    " bytes requested, " +
                    std::to_string(state.capacity - state.used[device]) +
                    " free");
  }
  const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  void* memory = rounded < size ? nullptr : std::aligned_alloc(kAlignment, rounded);
  if (memory == nullptr) {
    return Fail(OPENREG_ERROR_OUT_OF_MEMORY,
                std::string(function) + ": the host has no " +
                    std::to_string(size) + " bytes to give");
  }
  state.allocations[reinterpret_cast<uintptr_t>(memory)] = {device, size};
  if (device >= 0) state.used[device] += size;
  *ptr = memory;
  return OPENREG_SUCCESS;
}

openreg_status Release(const char* function, int32_t device, void* ptr) {
  if (ptr == nullptr) return OPENREG_SUCCESS;
  auto it = state.allocations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == state.allocations.end() || it->second.device != device) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                std::string(function) +
                    ": the pointer is not the start of a live allocation "
                    "of this kind (or of this device)");
  }
  if (device >= 0) state.used[device] -= it->second.size;
  state.allocations.erase(it);
  std::free(ptr);
  return OPENREG_SUCCESS;
}

openreg_status DeviceMalloc(int32_t device, size_t size, void** ptr) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckDevice("device_malloc", device)) {
    return status;
  }
  return Allocate("device_malloc", device, size, ptr);
}

openreg_status DeviceFree(int32_t device, void* ptr) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckDevice("device_free", device)) {
    return status;
  }
  return Release("device_free", device, ptr);
}

openreg_status HostMalloc(size_t size, void** ptr) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized("host_malloc")) return status;
  return Allocate("host_malloc", -1, size, ptr);
}

openreg_status HostFree(void* ptr) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized("host_free")) return status;
  return Release("host_free", -1, ptr);
}

openreg_status PointerGetAttributes(const void* ptr,
                                    openreg_pointer_attributes* attributes) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized("pointer_get_attributes")) {
    return status;
  }
  if (attributes == nullptr) {
    return NullArgument("pointer_get_attributes", "attributes");
  }
  if (!HAS_FIELD(openreg_pointer_attributes, attributes, memory_type)) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "pointer_get_attributes: attributes->struct_size is too "
                "small; set it to OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0");
  }
  auto it = Containing(ptr);
  const bool known = it != state.allocations.end();
  const int32_t device = known ? it->second.device : -1;
  attributes->memory_type = !known       ? OPENREG_MEMORY_TYPE_UNREGISTERED
                            : device < 0 ? OPENREG_MEMORY_TYPE_HOST
                                         : OPENREG_MEMORY_TYPE_DEVICE;
  if (HAS_FIELD(openreg_pointer_attributes, attributes, device)) {
    attributes->device = device;
  }
  if (HAS_FIELD(openreg_pointer_attributes, attributes, base)) {
    attributes->base = known ? reinterpret_cast<void*>(it->first) : nullptr;
  }
  if (HAS_FIELD(openreg_pointer_attributes, attributes, size)) {
    attributes->size = known ? it->second.size : 0;
  }
  return OPENREG_SUCCESS;
}

openreg_status MemGetInfo(int32_t device, uint64_t* free_bytes,
                          uint64_t* total_bytes) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckDevice("mem_get_info", device)) {
    return status;
  }
  if (free_bytes == nullptr || total_bytes == nullptr) {
    return NullArgument("mem_get_info", "free_bytes or total_bytes");
  }
  *free_bytes = state.capacity - state.used[device];
  *total_bytes = state.capacity;
  return OPENREG_SUCCESS;
}

// --- Copies: done before returning -------------------------------------------

openreg_status MemcpyAsync(void* dst, const void* src, size_t size,
                           int32_t kind, openreg_stream stream) {
  std::shared_ptr<Stream> found;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    if (openreg_status status = CheckInitialized("memcpy_async")) {
      return status;
    }
    found = FindStream("memcpy_async", stream);
    if (found == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
    if (kind < OPENREG_MEMCPY_HOST_TO_HOST ||
        kind > OPENREG_MEMCPY_DEVICE_TO_DEVICE) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  "memcpy_async: kind " + std::to_string(kind) +
                      " is not an OPENREG_MEMCPY_* value");
    }
    if (size == 0) return OPENREG_SUCCESS;
    if (dst == nullptr || src == nullptr) {
      return NullArgument("memcpy_async", "dst or src");
    }
    const bool device_dst = kind == OPENREG_MEMCPY_HOST_TO_DEVICE ||
                            kind == OPENREG_MEMCPY_DEVICE_TO_DEVICE;
    const bool device_src = kind == OPENREG_MEMCPY_DEVICE_TO_HOST ||
                            kind == OPENREG_MEMCPY_DEVICE_TO_DEVICE;
    if ((device_dst && !IsDeviceRange(dst, size)) ||
        (device_src && !IsDeviceRange(src, size))) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  "memcpy_async: a device side of the copy is not inside one "
                  "live device allocation");
    }
  }
  std::lock_guard<std::recursive_mutex> running(found->running);
  std::memmove(dst, src, size);
  return OPENREG_SUCCESS;
}

openreg_status MemsetAsync(void* ptr, int32_t value, size_t size,
                           openreg_stream stream) {
  std::shared_ptr<Stream> found;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    if (openreg_status status = CheckInitialized("memset_async")) {
      return status;
    }
    found = FindStream("memset_async", stream);
    if (found == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
    if (size == 0) return OPENREG_SUCCESS;
    if (!IsDeviceRange(ptr, size)) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  "memset_async: the range is not inside one live device "
                  "allocation");
    }
  }
  std::lock_guard<std::recursive_mutex> running(found->running);
  std::memset(ptr, value, size);
  return OPENREG_SUCCESS;
}

// --- Streams: nothing is ever pending ----------------------------------------

openreg_status StreamCreate(int32_t device, int32_t priority,
                            openreg_stream* stream) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckDevice("stream_create", device)) {
    return status;
  }
  if (stream == nullptr) return NullArgument("stream_create", "stream");
  if (priority != 0) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "stream_create: priority " + std::to_string(priority) +
                    " is outside the device's range [0, 0]");
  }
  *stream = NewHandle<openreg_stream>();
  state.streams[HandleId(*stream)] = std::make_shared<Stream>(device);
  return OPENREG_SUCCESS;
}

openreg_status StreamDestroy(openreg_stream stream) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized("stream_destroy")) {
    return status;
  }
  if (state.streams.erase(HandleId(stream)) == 0) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "stream_destroy: unknown or destroyed stream");
  }
  return OPENREG_SUCCESS;
}

// Looks up a live stream for a call that needs nothing else of the state.
// For query and synchronize that is all: a live stream has always finished.
openreg_status LookUpStream(const char* function, openreg_stream stream,
                            std::shared_ptr<Stream>* found = nullptr) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized(function)) return status;
  std::shared_ptr<Stream> live = FindStream(function, stream);
  if (live == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  if (found != nullptr) *found = std::move(live);
  return OPENREG_SUCCESS;
}

openreg_status StreamQuery(openreg_stream stream) {
  return LookUpStream("stream_query", stream);
}

openreg_status StreamSynchronize(openreg_stream stream) {
  return LookUpStream("stream_synchronize", stream);
}

openreg_status StreamWaitEvent(openreg_stream stream, openreg_event event) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized("stream_wait_event")) {
    return status;
  }
  if (FindStream("stream_wait_event", stream) == nullptr ||
      FindEvent("stream_wait_event", event) == nullptr) {
    return OPENREG_ERROR_INVALID_ARGUMENT;
  }
  return OPENREG_SUCCESS;
}

// --- Events: a record completes at once ---------------------------------------

openreg_status EventCreate(int32_t device, uint32_t flags,
                           openreg_event* event) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckDevice("event_create", device)) {
    return status;
  }
  if (event == nullptr) return NullArgument("event_create", "event");
  if ((flags & ~OPENREG_EVENT_ENABLE_TIMING) != 0) {
    return Fail(OPENREG_ERROR_NOT_SUPPORTED,
                "event_create: unknown flags " + std::to_string(flags));
  }
  *event = NewHandle<openreg_event>();
  state.events[HandleId(*event)] = Event{device, flags};
  return OPENREG_SUCCESS;
}

openreg_status EventDestroy(openreg_event event) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized("event_destroy")) return status;
  if (state.events.erase(HandleId(event)) == 0) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "event_destroy: unknown or destroyed event");
  }
  return OPENREG_SUCCESS;
}

openreg_status EventRecord(openreg_event event, openreg_stream stream) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized("event_record")) return status;
  Event* found = FindEvent("event_record", event);
  std::shared_ptr<Stream> on = FindStream("event_record", stream);
  if (found == nullptr || on == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  const int32_t device = on->device;
  if (device != found->device) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "event_record: the stream is on device " +
                    std::to_string(device) + ", the event on device " +
                    std::to_string(found->device));
  }
  found->recorded = true;
  found->completed = std::chrono::steady_clock::now();
  return OPENREG_SUCCESS;
}

openreg_status CheckEvent(const char* function, openreg_event event) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized(function)) return status;
  return FindEvent(function, event) == nullptr ? OPENREG_ERROR_INVALID_ARGUMENT
                                               : OPENREG_SUCCESS;
}

openreg_status EventQuery(openreg_event event) {
  return CheckEvent("event_query", event);
}

openreg_status EventSynchronize(openreg_event event) {
  return CheckEvent("event_synchronize", event);
}

openreg_status EventElapsedTime(openreg_event start, openreg_event end,
                                float* milliseconds) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (openreg_status status = CheckInitialized("event_elapsed_time")) {
    return status;
  }
  const Event* first = FindEvent("event_elapsed_time", start);
  const Event* second = FindEvent("event_elapsed_time", end);
  if (first == nullptr || second == nullptr) {
    return OPENREG_ERROR_INVALID_ARGUMENT;
  }
  if (milliseconds == nullptr) {
    return NullArgument("event_elapsed_time", "milliseconds");
  }
  for (const Event* event : {first, second}) {
    if ((event->flags & OPENREG_EVENT_ENABLE_TIMING) == 0 || !event->recorded) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  "event_elapsed_time: both events need "
                  "OPENREG_EVENT_ENABLE_TIMING and a record");
    }
  }
  *milliseconds = std::chrono::duration<float, std::milli>(second->completed -
                                                           first->completed)
                      .count();
  return OPENREG_SUCCESS;
}

// --- Execution ----------------------------------------------------------------

openreg_status LaunchHostFunc(openreg_stream stream, openreg_host_fn fn,
                              void* user_data) {
  std::shared_ptr<Stream> found;
  if (openreg_status status = LookUpStream("launch_host_func", stream, &found)) {
    return status;
  }
  if (fn == nullptr) return NullArgument("launch_host_func", "fn");
  openreg_status status;
  {
    std::lock_guard<std::recursive_mutex> running(found->running);
    status = fn(user_data);  // without the state lock
  }
  if (status != OPENREG_SUCCESS) {
    return Fail(OPENREG_ERROR_LAUNCH_FAILURE,
                "launch_host_func: the host function returned status " +
                    std::to_string(status));
  }
  return OPENREG_SUCCESS;
}

openreg_status DeviceSynchronize(int32_t device) {
  std::lock_guard<std::mutex> lock(state.mu);
  return CheckDevice("device_synchronize", device);
}

// Built for ABI 1.0 on purpose: it is the tree's driver of an older major
// and minor version, so the core's handling of one is tested (it loads
// through the adapter; stream_get_priority, added in 1.1, is reported as not
// supported). Positional, as 1.x drivers were written; the size and minor
// version must agree.
constexpr openreg_driver_api_v1 kApi = {
    OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0,
    1,
    0,
    "minimal_v1",
    "1.0.0",
    Init,
    Shutdown,
    LastErrorMessage,
    GetDeviceCount,
    GetDeviceProperties,
    DeviceMalloc,
    DeviceFree,
    HostMalloc,
    HostFree,
    PointerGetAttributes,
    MemGetInfo,
    MemcpyAsync,
    MemsetAsync,
    StreamCreate,
    StreamDestroy,
    StreamQuery,
    StreamSynchronize,
    StreamWaitEvent,
    EventCreate,
    EventDestroy,
    EventRecord,
    EventQuery,
    EventSynchronize,
    EventElapsedTime,
    LaunchHostFunc,
    DeviceSynchronize,
};

}  // namespace

// The one exported symbol. It hands out the table whatever version the core
// speaks: the core compares versions itself and names both on a mismatch.
extern "C" __attribute__((visibility("default"))) openreg_status
OPENREG_DRIVER_ENTRY_SYMBOL(uint32_t core_abi_major, uint32_t core_abi_minor,
                            const openreg_driver_api_v1** api) {
  (void)core_abi_major;
  (void)core_abi_minor;
  if (api == nullptr) return NullArgument(OPENREG_DRIVER_ENTRY_SYMBOL_NAME, "api");
  *api = &kApi;
  return OPENREG_SUCCESS;
}
