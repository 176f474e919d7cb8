/*
 * openreg driver ABI, version 2.2.
 *
 * This header is the whole contract between the openreg core and a device
 * driver. A driver is a shared library that includes only this header and
 * exports one C function, OPENREG_DRIVER_ENTRY_SYMBOL, which hands the core a
 * table of function pointers. Nothing but plain C crosses this boundary: no
 * C++, STL, abseil or torch types, so a driver may be built with any compiler
 * and standard library.
 *
 * Contexts (new in 2.0): `context_create` returns an opaque openreg_context,
 * and every other function takes the context it works on as its first
 * argument, as PJRT passes its client and IREE its device. A context owns
 * everything created through it (devices' memory, pinned memory, streams,
 * events) and a driver keeps no process-wide state: several contexts of one
 * driver, and contexts of several drivers, may live in one process at the same
 * time, each with its own devices. A handle or pointer belongs to the context
 * that made it; passing it with another context is INVALID_ARGUMENT.
 *
 * One list of functions: OPENREG_DRIVER_FUNCTIONS below names every function
 * of the table, in table order, with its signature and the minor version that
 * added it. The table struct is generated from it, and so are the core's
 * checks of a loaded table, the simulated drivers' and the validation layer's
 * tables (filled by name, with designated initializers) and the index in
 * docs/driver_abi.md (checked by //driver_abi:function_index_test). Two
 * entries can therefore never be swapped silently.
 *
 * Versioning (the rules the core applies on load):
 *   - The major version changes only when an existing field or meaning
 *     changes. The core accepts its own major (2) and, through an adapter in
 *     the loader, drivers of major 1 (openreg_driver_v1.h); it refuses any
 *     other, naming both versions.
 *   - Every major's table starts with the fields of openreg_driver_api_prefix,
 *     so a loader can read any table's version before deciding how to use it.
 *   - A minor version only appends fields to the end of a struct. Every struct
 *     that crosses the boundary starts with `struct_size`; a reader uses a
 *     field only when `struct_size` shows the writer knew it. A driver built
 *     for an older minor version therefore loads, and the functions it lacks
 *     (every function a minor version appends is optional) are reported as
 *     unsupported.
 *   - Every change is recorded in docs/driver_abi_changelog.md.
 *
 * Ownership: the core owns every pointer it passes in for the duration of the
 * call only; the driver owns every context, handle (stream, event) and table
 * it returns until the matching destroy.
 *
 * Threading: unless a function says otherwise, it may be called from any
 * thread, concurrently with any other function on the same or another
 * context, between the `context_create` that made the context and its
 * `context_destroy`. `context_destroy` is called by one thread with no other
 * call on that context in flight. Host functions launched with
 * `launch_host_func` run on a thread of the driver's choosing; they must not
 * wait for their own stream or device: no `stream_synchronize` of that stream,
 * `device_synchronize` of that device, or blocking copy into pageable memory
 * on that stream (a driver may refuse such calls with INVALID_ARGUMENT rather
 * than deadlock).
 *
 * Lifetime: the openreg core keeps its context for the life of the process
 * and does not destroy it at exit, so a driver must let the process exit
 * (without hanging or crashing) while work is still queued. `context_destroy`
 * drops queued work and waits for running host functions; it may give up on
 * one that does not return after a bounded time. A child created by fork()
 * must not use contexts or handles from its parent; it may create new
 * contexts.
 *
 * Errors: every function but `last_error_message` returns an openreg_status.
 * On failure the driver sets a human-readable message that
 * `last_error_message` returns on the same thread. Failures of asynchronous
 * work (a failed host function, a failed asynchronous copy) are sticky on
 * their stream: the next `stream_query` or `stream_synchronize` of that stream
 * (or `device_synchronize` of its device) returns the failure once, after
 * which the stream is usable again; work enqueued after the failing item still
 * runs. A driver that runs work synchronously may instead return the failure
 * from the launching call itself; the core accepts both. A query that returns
 * NOT_READY is not a failure and need not set a message.
 *
 * Arguments: a NULL or destroyed context, a NULL handle, an unknown or
 * destroyed handle, a handle of another context, a NULL out-pointer, and a
 * struct whose struct_size does not cover its first field after struct_size
 * are all OPENREG_ERROR_INVALID_ARGUMENT.
 */
#ifndef OPENREG_DRIVER_ABI_OPENREG_DRIVER_H_
#define OPENREG_DRIVER_ABI_OPENREG_DRIVER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPENREG_DRIVER_ABI_VERSION_MAJOR 2
#define OPENREG_DRIVER_ABI_VERSION_MINOR 2

/* The one symbol a driver exports, and its name as a string for dlsym. The
 * same symbol serves every major version. */
#define OPENREG_DRIVER_ENTRY_SYMBOL openreg_driver_get_api
#define OPENREG_DRIVER_ENTRY_SYMBOL_NAME "openreg_driver_get_api"

/* The size a struct has when `last_field` is its final field: how the
 * versioned size constants below are derived, so they cannot go stale. */
#define OPENREG_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* ------------------------------------------------------------------------ */
/* Status codes. Fixed-width so the ABI does not depend on enum sizing.      */
/* ------------------------------------------------------------------------ */
typedef int32_t openreg_status;

#define OPENREG_SUCCESS 0
/* An argument is NULL, out of range, or a context or handle the driver does
 * not know (destroyed, made up, or of another context). */
#define OPENREG_ERROR_INVALID_ARGUMENT 1
/* A device index is outside [0, device_count). */
#define OPENREG_ERROR_INVALID_DEVICE 2
/* The device (or host, for pinned memory) cannot satisfy an allocation. */
#define OPENREG_ERROR_OUT_OF_MEMORY 3
/* Work queried with stream_query/event_query has not finished yet. */
#define OPENREG_ERROR_NOT_READY 4
/* The driver does not implement an optional feature or flag. */
#define OPENREG_ERROR_NOT_SUPPORTED 5
/* A host function or asynchronous copy failed; sticky on its stream. */
#define OPENREG_ERROR_LAUNCH_FAILURE 6
/* The device is gone; every later call on it fails. */
#define OPENREG_ERROR_DEVICE_LOST 7
/* A bug or broken invariant inside the driver. */
#define OPENREG_ERROR_INTERNAL 8
/* Kept from 1.x, where it meant "before init or after shutdown". A 2.0
 * driver has no such state (a call without a live context is
 * INVALID_ARGUMENT); the core still maps it, for drivers of major 1. */
#define OPENREG_ERROR_NOT_INITIALIZED 9

/* ------------------------------------------------------------------------ */
/* Handles. Opaque to the core; created and destroyed by the driver.         */
/* ------------------------------------------------------------------------ */
/* A driver instance: its devices, memory, streams and events. (v2.0) */
typedef struct openreg_context_s* openreg_context;
typedef struct openreg_stream_s* openreg_stream;
typedef struct openreg_event_s* openreg_event;

/* ------------------------------------------------------------------------ */
/* Structs that cross the boundary. Each starts with struct_size. Their      */
/* layout is unchanged since 1.0, and their size constants keep the names    */
/* of the version that last appended to them.                                */
/* ------------------------------------------------------------------------ */

/* Passed to context_create. Zero-valued fields ask for the driver's
 * default. */
typedef struct openreg_driver_config {
  size_t struct_size;
  /* Number of devices to expose; 0 means the driver's default. (v1.0) */
  int32_t device_count;
  /* Capacity of each device's memory in bytes; 0 means the driver's default.
   * Allocations past it fail with OPENREG_ERROR_OUT_OF_MEMORY. (v1.0) */
  uint64_t device_memory_bytes;
  /* Driver-specific options, "key=value" pairs separated by commas, or NULL.
   * A driver rejects a key it does not know with INVALID_ARGUMENT. (v1.0) */
  const char* options;
} openreg_driver_config;
#define OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0 \
  OPENREG_STRUCT_SIZE(openreg_driver_config, options)

#define OPENREG_DEVICE_NAME_MAX 128

typedef struct openreg_device_properties {
  size_t struct_size;
  /* NUL-terminated device name, e.g. "openreg cpu_sim device". (v1.0) */
  char name[OPENREG_DEVICE_NAME_MAX];
  /* Capacity of device memory in bytes. (v1.0) */
  uint64_t total_memory_bytes;
  /* Stream priorities follow CUDA: a lower number is a higher priority.
   * Valid priorities are [greatest_stream_priority, least_stream_priority];
   * least is the default priority. (v1.0) */
  int32_t least_stream_priority;
  int32_t greatest_stream_priority;
  /* Number of streams whose work can execute at the same time. (v1.0) */
  int32_t concurrent_streams;
} openreg_device_properties;
#define OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0 \
  OPENREG_STRUCT_SIZE(openreg_device_properties, concurrent_streams)

/* What a pointer points into. */
#define OPENREG_MEMORY_TYPE_UNREGISTERED 0 /* not allocated by this context */
#define OPENREG_MEMORY_TYPE_HOST 1         /* pinned host memory */
#define OPENREG_MEMORY_TYPE_DEVICE 2       /* device memory */

typedef struct openreg_pointer_attributes {
  size_t struct_size;
  int32_t memory_type; /* OPENREG_MEMORY_TYPE_* (v1.0) */
  int32_t device;      /* owning device, or -1 for host/unregistered (v1.0) */
  void* base;          /* start of the allocation holding the pointer (v1.0) */
  uint64_t size;       /* size of that allocation in bytes (v1.0) */
} openreg_pointer_attributes;
#define OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0 \
  OPENREG_STRUCT_SIZE(openreg_pointer_attributes, size)

/* Direction of a copy. */
#define OPENREG_MEMCPY_HOST_TO_HOST 0
#define OPENREG_MEMCPY_HOST_TO_DEVICE 1
#define OPENREG_MEMCPY_DEVICE_TO_HOST 2
#define OPENREG_MEMCPY_DEVICE_TO_DEVICE 3

/* Event creation flags (bitwise OR). */
#define OPENREG_EVENT_DEFAULT 0u
/* Record a timestamp when the event's marker executes; needed for
 * event_elapsed_time. */
#define OPENREG_EVENT_ENABLE_TIMING 1u

/* A function run in stream order by launch_host_func. It returns
 * OPENREG_SUCCESS, or a failure that the driver makes sticky on the stream as
 * OPENREG_ERROR_LAUNCH_FAILURE. It must not throw (it is C). */
typedef openreg_status (*openreg_host_fn)(void* user_data);

/* Activity recording (v2.2, optional): what a driver reports about each item
 * it executed, so that a profiler can show device work per stream. */
#define OPENREG_ACTIVITY_HOST_FUNCTION 0 /* an item of launch_host_func */
#define OPENREG_ACTIVITY_MEMCPY 1        /* an item of memcpy_async */
#define OPENREG_ACTIVITY_MEMSET 2        /* an item of memset_async */
#define OPENREG_ACTIVITY_EVENT_RECORD 3  /* the marker of event_record */
#define OPENREG_ACTIVITY_EVENT_WAIT 4    /* the wait of stream_wait_event */

/* Written by the driver, which sets struct_size to the size of the version
 * it fills; the reader uses only the fields that size covers. */
typedef struct openreg_activity_record {
  size_t struct_size;
  /* OPENREG_ACTIVITY_*. (v2.2) */
  int32_t kind;
  /* The device of `stream`. (v2.2) */
  int32_t device;
  /* The stream the item ran on. (v2.2) */
  openreg_stream stream;
  /* When the item started and ended executing, in nanoseconds of the clock
   * activity_get_timestamp reads; start <= end. For an event wait, start is
   * when the stream reached the wait and end when it was satisfied. (v2.2) */
  uint64_t start_ns;
  uint64_t end_ns;
  /* The correlation id the enqueueing thread had set with
   * activity_set_correlation_id when it enqueued the item, or 0. (v2.2) */
  uint64_t correlation_id;
  /* For MEMCPY: OPENREG_MEMCPY_*; otherwise -1. (v2.2) */
  int32_t memcpy_kind;
  /* For MEMCPY and MEMSET: the bytes moved or set; otherwise 0. (v2.2) */
  uint64_t bytes;
} openreg_activity_record;
#define OPENREG_ACTIVITY_RECORD_STRUCT_SIZE_V2_2 \
  OPENREG_STRUCT_SIZE(openreg_activity_record, bytes)

/* Receives one record, on a thread of the driver's choosing (typically the
 * one that ran the item), right after the item finished. `record` is
 * borrowed for the call. It must return quickly and must not call the
 * driver's activity functions. */
typedef void (*openreg_activity_fn)(void* user_data,
                                    const openreg_activity_record* record);

/* ------------------------------------------------------------------------ */
/* The function list.                                                        */
/* ------------------------------------------------------------------------ */
/* OPENREG_DRIVER_FUNCTIONS(X) expands X(minor, return_type, name, params)
 * once per function, in table order: `minor` is the 2.x minor version that
 * added the function (0: required; later: optional, see below), `params` the
 * parenthesized parameter list. Every function but context_create takes the
 * context first.
 *
 * Functions appended by a minor version are optional: the core calls one
 * only when the table's struct_size covers it and the pointer is not NULL,
 * and reports the feature as not supported otherwise. A driver that
 * implements one must implement it fully. Append new functions at the end,
 * with the new minor version. */
#define OPENREG_DRIVER_FUNCTIONS(X)                                            \
  /* --- Lifecycle -------------------------------------------------------- */ \
  /* A new context configured by `config` (NULL means defaults). Any number    \
   * may exist at once; a driver that cannot open another (its hardware is     \
   * taken) returns NOT_SUPPORTED. INVALID_ARGUMENT for a bad config, with a   \
   * message naming the field or option. (v2.0) */                             \
  X(0, openreg_status, context_create,                                         \
    (const openreg_driver_config* config, openreg_context* context))           \
  /* Releases everything the context owns. Work still queued is dropped        \
   * without running; must not hang. The context is invalid afterwards.        \
   * (v2.0) */                                                                 \
  X(0, openreg_status, context_destroy, (openreg_context context))             \
  /* The message of the most recent failed call on the calling thread, or      \
   * "" if none. `context` is the context that call used, or NULL after a      \
   * failed context_create (a driver may keep messages per context). Valid     \
   * until the next call on the same thread. Never fails. (v2.0) */            \
  X(0, const char*, last_error_message, (openreg_context context))             \
  /* --- Devices ---------------------------------------------------------- */ \
  X(0, openreg_status, get_device_count,                                       \
    (openreg_context context, int32_t * count))                                \
  /* Fills `props`; the caller sets props->struct_size first, and the driver   \
   * writes only the fields that size covers. (v2.0) */                        \
  X(0, openreg_status, get_device_properties,                                  \
    (openreg_context context, int32_t device,                                  \
     openreg_device_properties * props))                                       \
  /* --- Memory ----------------------------------------------------------- */ \
  /* Device memory, aligned to at least 256 bytes. size 0 gives NULL and       \
   * success. OUT_OF_MEMORY past the device capacity. (v2.0) */                \
  X(0, openreg_status, device_malloc,                                          \
    (openreg_context context, int32_t device, size_t size, void** ptr))        \
  /* Frees memory from device_malloc on `device`. NULL is a no-op. The         \
   * caller guarantees no queued work still uses it. (v2.0) */                 \
  X(0, openreg_status, device_free,                                            \
    (openreg_context context, int32_t device, void* ptr))                      \
  /* Pinned (page-locked) host memory, usable by asynchronous copies of this   \
   * context. (v2.0) */                                                        \
  X(0, openreg_status, host_malloc,                                            \
    (openreg_context context, size_t size, void** ptr))                        \
  X(0, openreg_status, host_free, (openreg_context context, void* ptr))        \
  /* Describes any pointer; a pointer this context did not allocate is         \
   * MEMORY_TYPE_UNREGISTERED and success. The caller sets                     \
   * attributes->struct_size first. (v2.0) */                                  \
  X(0, openreg_status, pointer_get_attributes,                                 \
    (openreg_context context, const void* ptr,                                 \
     openreg_pointer_attributes* attributes))                                  \
  /* Bytes free and total on `device`. (v2.0) */                               \
  X(0, openreg_status, mem_get_info,                                           \
    (openreg_context context, int32_t device, uint64_t * free_bytes,           \
     uint64_t * total_bytes))                                                  \
  /* --- Copies (asynchronous, in stream order) --------------------------- */ \
  /* Copy `size` bytes. `kind` is OPENREG_MEMCPY_*. Device pointers may        \
   * belong to any device of the context; the copy is ordered only with        \
   * `stream`. Host memory that is not pinned (not from host_malloc) is        \
   * handled synchronously: a pageable source is read before the call          \
   * returns (the caller may free it at once), and a copy into pageable        \
   * memory returns only once all earlier work on `stream` and the copy        \
   * itself are done, as on CUDA. (v2.0) */                                    \
  X(0, openreg_status, memcpy_async,                                           \
    (openreg_context context, void* dst, const void* src, size_t size,         \
     int32_t kind, openreg_stream stream))                                     \
  /* Set `size` bytes of device memory at `ptr` to the low byte of `value`,    \
   * as memset does. (v2.0) */                                                 \
  X(0, openreg_status, memset_async,                                           \
    (openreg_context context, void* ptr, int32_t value, size_t size,           \
     openreg_stream stream))                                                   \
  /* --- Streams ---------------------------------------------------------- */ \
  /* A new stream on `device` with `priority` in the device's range; a         \
   * priority outside it is INVALID_ARGUMENT. (v2.0) */                        \
  X(0, openreg_status, stream_create,                                          \
    (openreg_context context, int32_t device, int32_t priority,                \
     openreg_stream * stream))                                                 \
  /* Destroys a stream once its queued work completes; does not block.         \
   * (v2.0) */                                                                 \
  X(0, openreg_status, stream_destroy,                                         \
    (openreg_context context, openreg_stream stream))                          \
  /* SUCCESS when every item enqueued so far has finished running, NOT_READY   \
   * while any is queued or running, or the stream's sticky failure. (v2.0)    \
   */                                                                          \
  X(0, openreg_status, stream_query,                                           \
    (openreg_context context, openreg_stream stream))                          \
  /* Blocks until every item enqueued so far has finished. (v2.0) */           \
  X(0, openreg_status, stream_synchronize,                                     \
    (openreg_context context, openreg_stream stream))                          \
  /* Later work on `stream` waits for the record of `event` that was most      \
   * recent when this call was made. An unrecorded event is a no-op. The       \
   * stream and the event may be on different devices. (v2.0) */               \
  X(0, openreg_status, stream_wait_event,                                      \
    (openreg_context context, openreg_stream stream, openreg_event event))     \
  /* The priority of `stream`: the value stream_create gave it, in the         \
   * device's range (lower is higher priority), as cudaStreamGetPriority.      \
   * Any thread, also a host function running on `stream`. (v2.0; optional     \
   * as stream_get_priority in 1.1) */                                         \
  X(0, openreg_status, stream_get_priority,                                    \
    (openreg_context context, openreg_stream stream, int32_t * priority))      \
  /* --- Events ----------------------------------------------------------- */ \
  /* A new event on `device` with OPENREG_EVENT_* flags; unknown flags are     \
   * INVALID_ARGUMENT. (v2.0) */                                               \
  X(0, openreg_status, event_create,                                           \
    (openreg_context context, int32_t device, uint32_t flags,                  \
     openreg_event * event))                                                   \
  X(0, openreg_status, event_destroy,                                          \
    (openreg_context context, openreg_event event))                            \
  /* Enqueues a marker on `stream`; the event completes when it runs. The      \
   * stream must be on the event's device. (v2.0) */                           \
  X(0, openreg_status, event_record,                                           \
    (openreg_context context, openreg_event event, openreg_stream stream))     \
  /* SUCCESS if the latest record completed (or there was none), else          \
   * NOT_READY. (v2.0) */                                                      \
  X(0, openreg_status, event_query,                                            \
    (openreg_context context, openreg_event event))                            \
  /* Blocks until the latest record completes. (v2.0) */                       \
  X(0, openreg_status, event_synchronize,                                      \
    (openreg_context context, openreg_event event))                            \
  /* Milliseconds from the completion of `start`'s latest record to that of    \
   * `end`'s; negative if `end` completed first. The events may belong to      \
   * different devices. NOT_READY if either has not completed;                 \
   * INVALID_ARGUMENT if either was created without                            \
   * OPENREG_EVENT_ENABLE_TIMING or never recorded. (v2.0) */                  \
  X(0, openreg_status, event_elapsed_time,                                     \
    (openreg_context context, openreg_event start, openreg_event end,          \
     float* milliseconds))                                                     \
  /* --- Execution -------------------------------------------------------- */ \
  /* Runs fn(user_data) in stream order: after all earlier work on `stream`,   \
   * before all later work. This is how all compute reaches a device.          \
   * (v2.0) */                                                                 \
  X(0, openreg_status, launch_host_func,                                       \
    (openreg_context context, openreg_stream stream, openreg_host_fn fn,       \
     void* user_data))                                                         \
  /* Blocks until all work on every stream of `device` finished. (v2.0) */     \
  X(0, openreg_status, device_synchronize,                                     \
    (openreg_context context, int32_t device))                                 \
  /* --- Memory views (v2.1, optional) ----------------------------------- */  \
  /* The execution offset of `device`: the constant that, added to any         \
   * address inside a device allocation of `device`, gives the address at      \
   * which code running on the driver's threads (host functions) reads and     \
   * writes those bytes. The address device_malloc returned is the device      \
   * view: the host cannot dereference it (it faults, as on hardware), so      \
   * device-generic host code that does is caught. The offset never changes    \
   * for the life of the context. Translating is the driver's job inside its   \
   * own functions (copies, memsets take device-view pointers) and the         \
   * caller's job whenever it hands device memory to code it runs on the       \
   * driver's threads. 0 means device memory is host-accessible at its         \
   * device address; a driver without this function is treated as              \
   * reporting 0. (v2.1) */                                                    \
  X(1, openreg_status, device_execution_offset,                                \
    (openreg_context context, int32_t device, intptr_t * offset))              \
  /* --- Activity recording (v2.2, optional; all three or none) ---------- */  \
  /* Starts reporting every item enqueued from now on to `fn(user_data, ...)`  \
   * (once per item, after it finished), or, with `fn` NULL, stops: when that  \
   * call returns no call of the previous `fn` is running or will start, so    \
   * the caller may free `user_data`. Calling it with a new `fn` replaces the  \
   * old one the same way. While off, a driver pays at most one check of a     \
   * flag per item. Items enqueued while off are never reported. (v2.2) */     \
  X(2, openreg_status, activity_enable,                                        \
    (openreg_context context, openreg_activity_fn fn, void* user_data))        \
  /* Sets the correlation id that items enqueued by the calling thread on      \
   * this context carry in their records, until the thread sets another; 0     \
   * means none (the initial value). A profiler sets it to the id of the CPU   \
   * operation that is about to launch work, as CUPTI's external correlation   \
   * ids do. (v2.2) */                                                         \
  X(2, openreg_status, activity_set_correlation_id,                            \
    (openreg_context context, uint64_t correlation_id))                        \
  /* The current time of the clock records use, in nanoseconds: a caller       \
   * reads it and its own clock together to place records on its timeline.     \
   * Monotonic; the same for every device of the context. (v2.2) */            \
  X(2, openreg_status, activity_get_timestamp,                                 \
    (openreg_context context, uint64_t * timestamp_ns))

/* ------------------------------------------------------------------------ */
/* The function table.                                                       */
/* ------------------------------------------------------------------------ */

/* The fields every major version's table starts with, frozen forever: a
 * loader reads them to learn which major version it was handed. */
typedef struct openreg_driver_api_prefix {
  size_t struct_size;
  /* The ABI version the driver was built against. (v1.0) */
  uint32_t abi_version_major;
  uint32_t abi_version_minor;
  /* Static NUL-terminated strings, valid while the library is loaded. (v1.0) */
  const char* driver_name;
  const char* driver_version;
} openreg_driver_api_prefix;

#define OPENREG_DECLARE_TABLE_FIELD(minor, return_type, name, params) \
  return_type(*name) params;

typedef struct openreg_driver_api {
  /* The prefix, field by field (see openreg_driver_api_prefix). */
  size_t struct_size;
  uint32_t abi_version_major;
  uint32_t abi_version_minor;
  const char* driver_name;
  const char* driver_version;
  /* One pointer per OPENREG_DRIVER_FUNCTIONS entry, in its order. */
  OPENREG_DRIVER_FUNCTIONS(OPENREG_DECLARE_TABLE_FIELD)
} openreg_driver_api;

#undef OPENREG_DECLARE_TABLE_FIELD

/* The table's size in each minor version of major 2: its last field then. */
#define OPENREG_DRIVER_API_STRUCT_SIZE_V2_0 \
  OPENREG_STRUCT_SIZE(openreg_driver_api, device_synchronize)
#define OPENREG_DRIVER_API_STRUCT_SIZE_V2_1 \
  OPENREG_STRUCT_SIZE(openreg_driver_api, device_execution_offset)
#define OPENREG_DRIVER_API_STRUCT_SIZE_V2_2 \
  OPENREG_STRUCT_SIZE(openreg_driver_api, activity_get_timestamp)

/* ------------------------------------------------------------------------ */
/* Compile-time check of the size constants.                                 */
/* ------------------------------------------------------------------------ */
/* Each struct's newest size constant must reach its last field: only
 * trailing padding (less than the struct's alignment) may follow. Appending
 * a field without adding the constant of the new minor version (and pointing
 * these checks at it) then fails to compile in every driver and in the core.
 * A field small enough to fit in the padding escapes this check;
 * tests/driver_abi/abi_layout_test.cc pins every released offset and size. */
#ifdef __cplusplus
#define OPENREG_STATIC_ASSERT(condition, message) \
  static_assert(condition, message)
#define OPENREG_ALIGNOF(type) alignof(type)
#else
#define OPENREG_STATIC_ASSERT(condition, message) \
  _Static_assert(condition, message)
#define OPENREG_ALIGNOF(type) _Alignof(type)
#endif

#define OPENREG_CHECK_NEWEST_STRUCT_SIZE(type, newest_size)                  \
  OPENREG_STATIC_ASSERT(                                                     \
      (newest_size) <= sizeof(type) &&                                       \
          sizeof(type) - (newest_size) < OPENREG_ALIGNOF(type),              \
      #type " has fields past " #newest_size                                 \
      ": add the size constant of the new minor version and check it here")

OPENREG_CHECK_NEWEST_STRUCT_SIZE(openreg_driver_config,
                                 OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0);
OPENREG_CHECK_NEWEST_STRUCT_SIZE(openreg_device_properties,
                                 OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0);
OPENREG_CHECK_NEWEST_STRUCT_SIZE(openreg_pointer_attributes,
                                 OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0);
OPENREG_CHECK_NEWEST_STRUCT_SIZE(openreg_driver_api,
                                 OPENREG_DRIVER_API_STRUCT_SIZE_V2_2);
OPENREG_CHECK_NEWEST_STRUCT_SIZE(openreg_activity_record,
                                 OPENREG_ACTIVITY_RECORD_STRUCT_SIZE_V2_2);
OPENREG_STATIC_ASSERT(
    offsetof(openreg_driver_api, driver_version) ==
            offsetof(openreg_driver_api_prefix, driver_version) &&
        offsetof(openreg_driver_api, abi_version_minor) ==
            offsetof(openreg_driver_api_prefix, abi_version_minor),
    "openreg_driver_api must start with openreg_driver_api_prefix");

/* Whether `api` has the activity-recording group of 2.2: its struct_size
 * covers the group and all three functions are set (a driver has all three
 * or none). */
static inline int openreg_driver_has_activity_recording(
    const openreg_driver_api* api) {
  return api->struct_size >= OPENREG_DRIVER_API_STRUCT_SIZE_V2_2 &&
         api->activity_enable != NULL &&
         api->activity_set_correlation_id != NULL &&
         api->activity_get_timestamp != NULL;
}

/* The entry point. The core passes its own ABI version; the driver stores a
 * pointer to its static table in *api (valid until the library is unloaded)
 * and returns SUCCESS whatever that version is: the core decides
 * compatibility from the table's abi_version_major/minor, so its error can
 * name both versions. A core of major 2 reads the table through
 * openreg_driver_api_prefix first; a driver of major 1 hands out an
 * openreg_driver_api_v1 (openreg_driver_v1.h) through the same symbol. Any
 * other status means the driver cannot be used at all; the core reports it
 * with the status (and, if the driver stored a table anyway, that table's
 * last_error_message(NULL)). */
typedef openreg_status (*openreg_driver_get_api_fn)(
    uint32_t core_abi_major, uint32_t core_abi_minor,
    const openreg_driver_api** api);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPENREG_DRIVER_ABI_OPENREG_DRIVER_H_ */
