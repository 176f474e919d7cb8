// The smallest complete openreg driver, for driver ABI 2.0: the worked
// example of docs/writing_a_driver.md. It passes the whole conformance suite
// and trains examples/train.py. (minimal_driver_v1.cc is the same driver as
// written for ABI 1.0.)
//
// A context is a State that holds everything the context owns, named by a
// number that the driver looks up in its registry of live contexts (so a
// destroyed or made-up context is recognised without touching freed memory).
// Streams and events are numbers too, looked up in their context's State.
// Every handle takes a fresh number from one process-wide counter, so no
// handle ever aliases another, of this context or of another. Nothing else is
// process-wide, so any number of contexts coexist.
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
// Thread-safety: the handle counter is atomic, the registry's mutex guards the
// set of live contexts, and one mutex per context guards its state. Neither is
// held while a host function runs or data is copied, because host functions may
// call back into the driver. Instead each stream has a mutex held while its
// work runs, so items of one stream never overlap even when several threads
// launch them; it is recursive because a host function may enqueue on its own
// stream.
#include <atomic>
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

#include "driver_abi/openreg_driver.h"

namespace {

constexpr int32_t kDefaultDeviceCount = 2;
constexpr uint64_t kDefaultDeviceMemory = uint64_t{4} << 30;  // 4 GiB
constexpr size_t kAlignment = 256;  // the ABI's minimum

// A reader or writer touches a field only when struct_size covers it.
#define HAS_FIELD(type, object, field) \
  ((object)->struct_size >= OPENREG_STRUCT_SIZE(type, field))

// --- Errors: a per-thread message for last_error_message ------------------

thread_local std::string last_error;

openreg_status Fail(openreg_status status, const std::string& message) {
  last_error = "minimal_driver: " + message;
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

// One context's state.
struct State {
  ~State() {
    for (const auto& [address, allocation] : allocations) {
      std::free(reinterpret_cast<void*>(address));
    }
  }

  std::mutex mu;
  int32_t device_count = 0;
  uint64_t capacity = 0;
  std::vector<uint64_t> used;                   // bytes per device
  std::map<uintptr_t, Allocation> allocations;  // by base address
  // By handle number (see NewHandle). shared_ptr: work keeps its stream
  // alive while it runs unlocked.
  std::unordered_map<uint64_t, std::shared_ptr<Stream>> streams;
  std::unordered_map<uint64_t, Event> events;
};

// --- Handles: numbers, never reused ------------------------------------------

// Every handle (context, stream, event) is a number from this one
// process-wide counter, never reused and never a pointer. A handle that died
// therefore never aliases a new one, and a handle of one context is never
// one of another: looking it up in the wrong context fails.
std::atomic<uint64_t> next_handle{1};

template <typename Handle>
Handle NewHandle() {
  return reinterpret_cast<Handle>(static_cast<uintptr_t>(next_handle++));
}

uint64_t HandleId(const void* handle) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
}

// --- Contexts: the live ones, by number --------------------------------------

// A context handle is looked up in this registry of the live contexts. A NULL,
// destroyed or made-up context is then a failed lookup with a clear error,
// never a read of freed memory. This is a registry of what exists, not a
// "current" context: every call names its context. The registry is allocated
// once and never freed, so it outlives static destructors (the core may still
// call in during exit).
struct Contexts {
  std::mutex mu;  // guards `live`; never held while a State is used
  std::unordered_map<uint64_t, std::unique_ptr<State>> live;
};

Contexts& LiveContexts() {
  static Contexts* contexts = new Contexts;
  return *contexts;
}

// The state of the live context `context`, or null after setting the error.
// A plain pointer, with no reference count to update on every call: the ABI
// lets no call on a context run while it is being destroyed, so the State
// outlives every call that found it.
State* StateOf(openreg_context context, const char* function) {
  Contexts& contexts = LiveContexts();
  std::lock_guard<std::mutex> lock(contexts.mu);
  auto it = contexts.live.find(HandleId(context));
  if (it != contexts.live.end()) return it->second.get();
  Fail(OPENREG_ERROR_INVALID_ARGUMENT,
       std::string(function) +
           ": the context is NULL, was destroyed, or was never returned by "
           "context_create");
  return nullptr;
}

// The checks below expect state->mu to be held.

openreg_status CheckDevice(State* state, const char* function, int32_t device) {
  if (device >= 0 && device < state->device_count) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_INVALID_DEVICE,
              std::string(function) + ": device " + std::to_string(device) +
                  " does not exist; valid devices are 0 to " +
                  std::to_string(state->device_count - 1));
}

// A live stream, or null after setting the error.
std::shared_ptr<Stream> FindStream(State* state, const char* function,
                                   openreg_stream stream) {
  auto it = state->streams.find(HandleId(stream));
  if (it != state->streams.end()) return it->second;
  Fail(OPENREG_ERROR_INVALID_ARGUMENT,
       std::string(function) + ": unknown or destroyed stream");
  return nullptr;
}

Event* FindEvent(State* state, const char* function, openreg_event event) {
  auto it = state->events.find(HandleId(event));
  if (it != state->events.end()) return &it->second;
  Fail(OPENREG_ERROR_INVALID_ARGUMENT,
       std::string(function) + ": unknown or destroyed event");
  return nullptr;
}

// The live allocation containing `ptr`, or end().
std::map<uintptr_t, Allocation>::iterator Containing(State* state,
                                                     const void* ptr) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  auto it = state->allocations.upper_bound(address);
  if (it == state->allocations.begin()) return state->allocations.end();
  --it;
  return address - it->first < it->second.size ? it : state->allocations.end();
}

// [ptr, ptr + size) lies inside one device allocation.
bool IsDeviceRange(State* state, const void* ptr, size_t size) {
  auto it = Containing(state, ptr);
  return it != state->allocations.end() && it->second.device >= 0 &&
         reinterpret_cast<uintptr_t>(ptr) - it->first + size <= it->second.size;
}

// --- Lifecycle --------------------------------------------------------------

// A new State. The State is deleted only by context_destroy; every call in
// between works on it alone.
openreg_status context_create(const openreg_driver_config* config,
                              openreg_context* context) {
  if (context == nullptr) return NullArgument("context_create", "context");
  *context = nullptr;
  int32_t device_count = kDefaultDeviceCount;
  uint64_t capacity = kDefaultDeviceMemory;
  if (config != nullptr) {
    if (!HAS_FIELD(openreg_driver_config, config, device_count)) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  "context_create: config->struct_size is too small; set it "
                  "to OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0");
    }
    if (config->device_count < 0) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  "context_create: device_count is negative; pass 0 for the "
                  "default");
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
                  std::string("context_create: unknown option in '") + options +
                      "'; this driver takes no options");
    }
  }
  auto state = std::make_unique<State>();
  state->device_count = device_count;
  state->capacity = capacity;
  state->used.assign(device_count, 0);
  Contexts& contexts = LiveContexts();
  std::lock_guard<std::mutex> lock(contexts.mu);
  *context = NewHandle<openreg_context>();
  contexts.live[HandleId(*context)] = std::move(state);
  return OPENREG_SUCCESS;
}

// Nothing is ever queued (work runs before its call returns), so there is
// nothing to drop or wait for: the State, and the memory it owns, goes with
// its registry entry.
openreg_status context_destroy(openreg_context context) {
  Contexts& contexts = LiveContexts();
  std::lock_guard<std::mutex> lock(contexts.mu);
  if (contexts.live.erase(HandleId(context)) == 0) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "context_destroy: the context is NULL, was destroyed, or was "
                "never returned by context_create");
  }
  return OPENREG_SUCCESS;
}

// Messages are per thread, not per context: one string serves every context.
const char* last_error_message(openreg_context) { return last_error.c_str(); }

// --- Devices ----------------------------------------------------------------

openreg_status get_device_count(openreg_context context, int32_t* count) {
  State* state = StateOf(context, "get_device_count");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  if (count == nullptr) return NullArgument("get_device_count", "count");
  *count = state->device_count;
  return OPENREG_SUCCESS;
}

openreg_status get_device_properties(openreg_context context, int32_t device,
                                     openreg_device_properties* props) {
  State* state = StateOf(context, "get_device_properties");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  if (openreg_status status =
          CheckDevice(state, "get_device_properties", device)) {
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
    props->total_memory_bytes = state->capacity;
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

openreg_status Allocate(State* state, const char* function, int32_t device,
                        size_t size, void** ptr) {
  if (ptr == nullptr) return NullArgument(function, "ptr");
  *ptr = nullptr;
  if (size == 0) return OPENREG_SUCCESS;
  if (device >= 0 && size > state->capacity - state->used[device]) {
    return Fail(
        OPENREG_ERROR_OUT_OF_MEMORY,
        std::string(function) + ": device " + std::to_string(device) +
            " out of memory: " + std::to_string(size) + " bytes requested, " +
            std::to_string(state->capacity - state->used[device]) + " free");
  }
  const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  void* memory =
      rounded < size ? nullptr : std::aligned_alloc(kAlignment, rounded);
  if (memory == nullptr) {
    return Fail(OPENREG_ERROR_OUT_OF_MEMORY,
                std::string(function) + ": the host has no " +
                    std::to_string(size) + " bytes to give");
  }
  state->allocations[reinterpret_cast<uintptr_t>(memory)] = {device, size};
  if (device >= 0) state->used[device] += size;
  *ptr = memory;
  return OPENREG_SUCCESS;
}

openreg_status Release(State* state, const char* function, int32_t device,
                       void* ptr) {
  if (ptr == nullptr) return OPENREG_SUCCESS;
  auto it = state->allocations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == state->allocations.end() || it->second.device != device) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                std::string(function) +
                    ": the pointer is not the start of a live allocation "
                    "of this kind (or of this device)");
  }
  if (device >= 0) state->used[device] -= it->second.size;
  state->allocations.erase(it);
  std::free(ptr);
  return OPENREG_SUCCESS;
}

openreg_status device_malloc(openreg_context context, int32_t device,
                             size_t size, void** ptr) {
  State* state = StateOf(context, "device_malloc");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  if (openreg_status status = CheckDevice(state, "device_malloc", device)) {
    return status;
  }
  return Allocate(state, "device_malloc", device, size, ptr);
}

openreg_status device_free(openreg_context context, int32_t device, void* ptr) {
  State* state = StateOf(context, "device_free");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  if (openreg_status status = CheckDevice(state, "device_free", device)) {
    return status;
  }
  return Release(state, "device_free", device, ptr);
}

openreg_status host_malloc(openreg_context context, size_t size, void** ptr) {
  State* state = StateOf(context, "host_malloc");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  return Allocate(state, "host_malloc", -1, size, ptr);
}

openreg_status host_free(openreg_context context, void* ptr) {
  State* state = StateOf(context, "host_free");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  return Release(state, "host_free", -1, ptr);
}

openreg_status pointer_get_attributes(openreg_context context, const void* ptr,
                                      openreg_pointer_attributes* attributes) {
  State* state = StateOf(context, "pointer_get_attributes");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  if (attributes == nullptr) {
    return NullArgument("pointer_get_attributes", "attributes");
  }
  if (!HAS_FIELD(openreg_pointer_attributes, attributes, memory_type)) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "pointer_get_attributes: attributes->struct_size is too "
                "small; set it to OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0");
  }
  auto it = Containing(state, ptr);
  const bool known = it != state->allocations.end();
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

openreg_status mem_get_info(openreg_context context, int32_t device,
                            uint64_t* free_bytes, uint64_t* total_bytes) {
  State* state = StateOf(context, "mem_get_info");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  if (openreg_status status = CheckDevice(state, "mem_get_info", device)) {
    return status;
  }
  if (free_bytes == nullptr || total_bytes == nullptr) {
    return NullArgument("mem_get_info", "free_bytes or total_bytes");
  }
  *free_bytes = state->capacity - state->used[device];
  *total_bytes = state->capacity;
  return OPENREG_SUCCESS;
}

// --- Copies: done before returning -------------------------------------------

openreg_status memcpy_async(openreg_context context, void* dst, const void* src,
                            size_t size, int32_t kind, openreg_stream stream) {
  std::shared_ptr<Stream> found;
  {
    State* state = StateOf(context, "memcpy_async");
    if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
    std::lock_guard<std::mutex> lock(state->mu);
    found = FindStream(state, "memcpy_async", stream);
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
    if ((device_dst && !IsDeviceRange(state, dst, size)) ||
        (device_src && !IsDeviceRange(state, src, size))) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  "memcpy_async: a device side of the copy is not inside one "
                  "live device allocation");
    }
  }
  std::lock_guard<std::recursive_mutex> running(found->running);
  std::memmove(dst, src, size);
  return OPENREG_SUCCESS;
}

openreg_status memset_async(openreg_context context, void* ptr, int32_t value,
                            size_t size, openreg_stream stream) {
  std::shared_ptr<Stream> found;
  {
    State* state = StateOf(context, "memset_async");
    if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
    std::lock_guard<std::mutex> lock(state->mu);
    found = FindStream(state, "memset_async", stream);
    if (found == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
    if (size == 0) return OPENREG_SUCCESS;
    if (!IsDeviceRange(state, ptr, size)) {
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

openreg_status stream_create(openreg_context context, int32_t device,
                             int32_t priority, openreg_stream* stream) {
  State* state = StateOf(context, "stream_create");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  if (openreg_status status = CheckDevice(state, "stream_create", device)) {
    return status;
  }
  if (stream == nullptr) return NullArgument("stream_create", "stream");
  if (priority != 0) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "stream_create: priority " + std::to_string(priority) +
                    " is outside the device's range [0, 0]");
  }
  *stream = NewHandle<openreg_stream>();
  state->streams[HandleId(*stream)] = std::make_shared<Stream>(device);
  return OPENREG_SUCCESS;
}

openreg_status stream_destroy(openreg_context context, openreg_stream stream) {
  State* state = StateOf(context, "stream_destroy");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  if (state->streams.erase(HandleId(stream)) == 0) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "stream_destroy: unknown or destroyed stream");
  }
  return OPENREG_SUCCESS;
}

// Looks up a live stream for a call that needs nothing else of the state.
// For query and synchronize that is all: a live stream has always finished.
openreg_status LookUpStream(openreg_context context, const char* function,
                            openreg_stream stream,
                            std::shared_ptr<Stream>* found = nullptr) {
  State* state = StateOf(context, function);
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  std::shared_ptr<Stream> live = FindStream(state, function, stream);
  if (live == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  if (found != nullptr) *found = std::move(live);
  return OPENREG_SUCCESS;
}

openreg_status stream_query(openreg_context context, openreg_stream stream) {
  return LookUpStream(context, "stream_query", stream);
}

openreg_status stream_synchronize(openreg_context context,
                                  openreg_stream stream) {
  return LookUpStream(context, "stream_synchronize", stream);
}

openreg_status stream_wait_event(openreg_context context, openreg_stream stream,
                                 openreg_event event) {
  State* state = StateOf(context, "stream_wait_event");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  if (FindStream(state, "stream_wait_event", stream) == nullptr ||
      FindEvent(state, "stream_wait_event", event) == nullptr) {
    return OPENREG_ERROR_INVALID_ARGUMENT;
  }
  return OPENREG_SUCCESS;
}

// Every stream has priority 0, the device's only one.
openreg_status stream_get_priority(openreg_context context,
                                   openreg_stream stream, int32_t* priority) {
  if (openreg_status status =
          LookUpStream(context, "stream_get_priority", stream)) {
    return status;
  }
  if (priority == nullptr) {
    return NullArgument("stream_get_priority", "priority");
  }
  *priority = 0;
  return OPENREG_SUCCESS;
}

// --- Events: a record completes at once -------------------------------------

openreg_status event_create(openreg_context context, int32_t device,
                            uint32_t flags, openreg_event* event) {
  State* state = StateOf(context, "event_create");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  if (openreg_status status = CheckDevice(state, "event_create", device)) {
    return status;
  }
  if (event == nullptr) return NullArgument("event_create", "event");
  if ((flags & ~OPENREG_EVENT_ENABLE_TIMING) != 0) {
    return Fail(OPENREG_ERROR_NOT_SUPPORTED,
                "event_create: unknown flags " + std::to_string(flags));
  }
  *event = NewHandle<openreg_event>();
  state->events[HandleId(*event)] = Event{device, flags};
  return OPENREG_SUCCESS;
}

openreg_status event_destroy(openreg_context context, openreg_event event) {
  State* state = StateOf(context, "event_destroy");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  if (state->events.erase(HandleId(event)) == 0) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                "event_destroy: unknown or destroyed event");
  }
  return OPENREG_SUCCESS;
}

openreg_status event_record(openreg_context context, openreg_event event,
                            openreg_stream stream) {
  State* state = StateOf(context, "event_record");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  Event* found = FindEvent(state, "event_record", event);
  std::shared_ptr<Stream> on = FindStream(state, "event_record", stream);
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

openreg_status CheckEvent(openreg_context context, const char* function,
                          openreg_event event) {
  State* state = StateOf(context, function);
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  return FindEvent(state, function, event) == nullptr
             ? OPENREG_ERROR_INVALID_ARGUMENT
             : OPENREG_SUCCESS;
}

openreg_status event_query(openreg_context context, openreg_event event) {
  return CheckEvent(context, "event_query", event);
}

openreg_status event_synchronize(openreg_context context, openreg_event event) {
  return CheckEvent(context, "event_synchronize", event);
}

openreg_status event_elapsed_time(openreg_context context, openreg_event start,
                                  openreg_event end, float* milliseconds) {
  State* state = StateOf(context, "event_elapsed_time");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  const Event* first = FindEvent(state, "event_elapsed_time", start);
  const Event* second = FindEvent(state, "event_elapsed_time", end);
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

// --- Execution --------------------------------------------------------------

openreg_status launch_host_func(openreg_context context, openreg_stream stream,
                                openreg_host_fn fn, void* user_data) {
  std::shared_ptr<Stream> found;
  if (openreg_status status =
          LookUpStream(context, "launch_host_func", stream, &found)) {
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

openreg_status device_synchronize(openreg_context context, int32_t device) {
  State* state = StateOf(context, "device_synchronize");
  if (state == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(state->mu);
  return CheckDevice(state, "device_synchronize", device);
}

// The table, filled by name from the ABI's function list: every 2.0 entry
// is the function of the same name above. The size and minor version name
// the version this file implements, not the header's newest, and the
// optional functions of later minor versions (e.g. 2.1's
// device_execution_offset, 2.2's activity recording) stay NULL: their callers
// treat them as absent.
#define MINIMAL_DRIVER_ENTRY(minor, return_type, name, params) \
  MINIMAL_DRIVER_ENTRY_##minor(name)
#define MINIMAL_DRIVER_ENTRY_0(name) .name = name,
#define MINIMAL_DRIVER_ENTRY_1(name)
#define MINIMAL_DRIVER_ENTRY_2(name)
constexpr openreg_driver_api kApi = {
    .struct_size = OPENREG_DRIVER_API_STRUCT_SIZE_V2_0,
    .abi_version_major = 2,
    .abi_version_minor = 0,
    .driver_name = "minimal",
    .driver_version = "2.0.0",
    OPENREG_DRIVER_FUNCTIONS(MINIMAL_DRIVER_ENTRY)};
#undef MINIMAL_DRIVER_ENTRY
#undef MINIMAL_DRIVER_ENTRY_0
#undef MINIMAL_DRIVER_ENTRY_1
#undef MINIMAL_DRIVER_ENTRY_2

}  // namespace

// The one exported symbol. It hands out the table whatever version the core
// speaks: the core compares versions itself and names both on a mismatch.
extern "C" __attribute__((visibility("default"))) openreg_status
OPENREG_DRIVER_ENTRY_SYMBOL(uint32_t core_abi_major, uint32_t core_abi_minor,
                            const openreg_driver_api** api) {
  (void)core_abi_major;
  (void)core_abi_minor;
  if (api == nullptr) {
    return NullArgument(OPENREG_DRIVER_ENTRY_SYMBOL_NAME, "api");
  }
  *api = &kApi;
  return OPENREG_SUCCESS;
}
