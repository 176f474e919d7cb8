/*
 * openreg driver ABI, version 1.1.
 *
 * This header is the whole contract between the openreg core and a device
 * driver. A driver is a shared library that includes only this header and
 * exports one C function, OPENREG_DRIVER_ENTRY_SYMBOL, which hands the core a
 * table of function pointers. Nothing but plain C crosses this boundary: no
 * C++, STL, abseil or torch types, so a driver may be built with any compiler
 * and standard library.
 *
 * Versioning (the rules the core applies on load):
 *   - The major version changes only when an existing field or meaning
 *     changes. The core refuses a driver whose major version differs from its
 *     own, naming both versions.
 *   - A minor version only appends fields to the end of a struct. Every struct
 *     that crosses the boundary starts with `struct_size`; a reader uses a
 *     field only when `struct_size` shows the writer knew it. A driver built
 *     for an older minor version therefore loads, and the features it lacks
 *     are reported as unsupported.
 *   - Every change is recorded in docs/driver_abi_changelog.md.
 *
 * Ownership: the core owns every pointer it passes in for the duration of the
 * call only; the driver owns every handle (stream, event) and every table it
 * returns until the matching destroy/shutdown.
 *
 * Threading: unless a function says otherwise, it may be called from any
 * thread, concurrently with any other function, after `init` returned success
 * and before `shutdown` is called. `init` and `shutdown` are each called by
 * one thread with no other call in flight; after `shutdown`, `init` may be
 * called again (handles from before are then invalid). Host functions
 * launched with `launch_host_func` run on a thread of the driver's choosing;
 * they must not wait for their own stream or device: no `stream_synchronize`
 * of that stream, `device_synchronize` of that device, or blocking copy into
 * pageable memory on that stream (a driver may refuse such calls with
 * INVALID_ARGUMENT rather than deadlock).
 *
 * Lifetime: the openreg core keeps a driver for the life of the process and
 * does not call `shutdown` at exit, so a driver must let the process exit
 * (without hanging or crashing) while work is still queued. `shutdown` drops
 * queued work and waits for running host functions; it may give up on one
 * that does not return after a bounded time. A child created by fork() must
 * not use handles from its parent; it starts with an uninitialized driver.
 *
 * Errors: every function returns an openreg_status. On failure the driver
 * sets a human-readable message that `last_error_message` returns on the same
 * thread. Failures of asynchronous work (a failed host function, a failed
 * asynchronous copy) are sticky on their stream: the next `stream_query` or
 * `stream_synchronize` of that stream (or `device_synchronize` of its device)
 * returns the failure once, after which the stream is usable again; work
 * enqueued after the failing item still runs. A driver that runs work
 * synchronously may instead return the failure from the launching call
 * itself; the core accepts both. A query that returns NOT_READY is not a
 * failure and need not set a message.
 *
 * Arguments: a NULL handle, an unknown or destroyed handle, a NULL
 * out-pointer, and a struct whose struct_size does not cover its first field
 * after struct_size are all OPENREG_ERROR_INVALID_ARGUMENT.
 */
#ifndef OPENREG_CORE_DRIVER_OPENREG_DRIVER_H_
#define OPENREG_CORE_DRIVER_OPENREG_DRIVER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPENREG_DRIVER_ABI_VERSION_MAJOR 1
#define OPENREG_DRIVER_ABI_VERSION_MINOR 1

/* The one symbol a driver exports, and its name as a string for dlsym. */
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
/* An argument is NULL, out of range or a handle the driver does not know. */
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
/* A call other than init came before init succeeded, or after shutdown. */
#define OPENREG_ERROR_NOT_INITIALIZED 9

/* ------------------------------------------------------------------------ */
/* Handles. Opaque to the core; created and destroyed by the driver.         */
/* ------------------------------------------------------------------------ */
typedef struct openreg_stream_s* openreg_stream;
typedef struct openreg_event_s* openreg_event;

/* ------------------------------------------------------------------------ */
/* Structs that cross the boundary. Each starts with struct_size.            */
/* ------------------------------------------------------------------------ */

/* Passed to init. Zero-valued fields ask for the driver's default. */
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
#define OPENREG_MEMORY_TYPE_UNREGISTERED 0 /* not allocated by this driver */
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

/* ------------------------------------------------------------------------ */
/* The function table.                                                       */
/* ------------------------------------------------------------------------ */
typedef struct openreg_driver_api {
  size_t struct_size;
  /* The ABI version the driver was built against. (v1.0) */
  uint32_t abi_version_major;
  uint32_t abi_version_minor;
  /* Static NUL-terminated strings, valid while the library is loaded. (v1.0) */
  const char* driver_name;
  const char* driver_version;

  /* --- Lifecycle ---------------------------------------------------------- */
  /* Initialize with `config` (NULL means defaults). Called first, and again
   * only after shutdown. Returns INVALID_ARGUMENT for a bad config or when
   * already initialized. (v1.0) */
  openreg_status (*init)(const openreg_driver_config* config);
  /* Release every resource. Work still queued is dropped without running;
   * must not hang. Called once, last. (v1.0) */
  openreg_status (*shutdown)(void);
  /* The message of the last failure on the calling thread, or "" if none.
   * Valid until the next call on the same thread. Callable before init.
   * (v1.0) */
  const char* (*last_error_message)(void);

  /* --- Devices ------------------------------------------------------------- */
  openreg_status (*get_device_count)(int32_t* count); /* (v1.0) */
  /* Fills `props`; the caller sets props->struct_size first, and the driver
   * writes only the fields that size covers. (v1.0) */
  openreg_status (*get_device_properties)(int32_t device,
                                          openreg_device_properties* props);

  /* --- Memory -------------------------------------------------------------- */
  /* Device memory, aligned to at least 256 bytes. size 0 gives NULL and
   * success. OUT_OF_MEMORY past the device capacity. (v1.0) */
  openreg_status (*device_malloc)(int32_t device, size_t size, void** ptr);
  /* Frees memory from device_malloc on `device`. NULL is a no-op. The caller
   * guarantees no queued work still uses it. (v1.0) */
  openreg_status (*device_free)(int32_t device, void* ptr);
  /* Pinned (page-locked) host memory, usable by asynchronous copies. (v1.0) */
  openreg_status (*host_malloc)(size_t size, void** ptr);
  openreg_status (*host_free)(void* ptr); /* (v1.0) */
  /* Describes any pointer; an unknown pointer is MEMORY_TYPE_UNREGISTERED and
   * success. The caller sets attributes->struct_size first. (v1.0) */
  openreg_status (*pointer_get_attributes)(const void* ptr,
                                           openreg_pointer_attributes* attributes);
  /* Bytes free and total on `device`. (v1.0) */
  openreg_status (*mem_get_info)(int32_t device, uint64_t* free_bytes,
                                 uint64_t* total_bytes);

  /* --- Copies (asynchronous, in stream order) ------------------------------ */
  /* Copy `size` bytes. `kind` is OPENREG_MEMCPY_*. Device pointers may belong
   * to any device; the copy is ordered only with `stream`. Host memory that is
   * not pinned (not from host_malloc) must be handled synchronously: a
   * pageable source is read before the call returns (the caller may free it
   * at once), and a copy into pageable memory returns only once all earlier
   * work on `stream` and the copy itself are done, as on CUDA. (v1.0) */
  openreg_status (*memcpy_async)(void* dst, const void* src, size_t size,
                                 int32_t kind, openreg_stream stream);
  /* Set `size` bytes of device memory at `ptr` to the low byte of `value`,
   * as memset does. (v1.0) */
  openreg_status (*memset_async)(void* ptr, int32_t value, size_t size,
                                 openreg_stream stream);

  /* --- Streams ------------------------------------------------------------- */
  /* A new stream on `device` with `priority` in the device's range; a
   * priority outside it is INVALID_ARGUMENT. (v1.0) */
  openreg_status (*stream_create)(int32_t device, int32_t priority,
                                  openreg_stream* stream);
  /* Destroys a stream once its queued work completes; does not block. (v1.0) */
  openreg_status (*stream_destroy)(openreg_stream stream);
  /* SUCCESS when every item enqueued so far has finished running, NOT_READY
   * while any is queued or running, or the stream's sticky failure. (v1.0) */
  openreg_status (*stream_query)(openreg_stream stream);
  /* Blocks until every item enqueued so far has finished. (v1.0) */
  openreg_status (*stream_synchronize)(openreg_stream stream);
  /* Later work on `stream` waits for the record of `event` that was most
   * recent when this call was made. An unrecorded event is a no-op. Streams
   * and events may be on different devices. (v1.0) */
  openreg_status (*stream_wait_event)(openreg_stream stream,
                                      openreg_event event);

  /* --- Events -------------------------------------------------------------- */
  /* A new event on `device` with OPENREG_EVENT_* flags. (v1.0) */
  openreg_status (*event_create)(int32_t device, uint32_t flags,
                                 openreg_event* event);
  openreg_status (*event_destroy)(openreg_event event); /* (v1.0) */
  /* Enqueues a marker on `stream`; the event completes when it runs. The
   * stream must be on the event's device. (v1.0) */
  openreg_status (*event_record)(openreg_event event, openreg_stream stream);
  /* SUCCESS if the latest record completed (or there was none), else
   * NOT_READY. (v1.0) */
  openreg_status (*event_query)(openreg_event event);
  /* Blocks until the latest record completes. (v1.0) */
  openreg_status (*event_synchronize)(openreg_event event);
  /* Milliseconds from the completion of `start`'s latest record to that of
   * `end`'s; negative if `end` completed first. The events may belong to
   * different devices. NOT_READY if either has not completed;
   * INVALID_ARGUMENT if either was created without
   * OPENREG_EVENT_ENABLE_TIMING or never recorded. (v1.0) */
  openreg_status (*event_elapsed_time)(openreg_event start, openreg_event end,
                                       float* milliseconds);

  /* --- Execution ----------------------------------------------------------- */
  /* Runs fn(user_data) in stream order: after all earlier work on `stream`,
   * before all later work. This is how all compute reaches a device. (v1.0) */
  openreg_status (*launch_host_func)(openreg_stream stream, openreg_host_fn fn,
                                     void* user_data);
  /* Blocks until all work on every stream of `device` finished. (v1.0) */
  openreg_status (*device_synchronize)(int32_t device);

  /* --- Optional functions -------------------------------------------------- */
  /* Functions appended by a minor version are optional: the core calls one
   * only when the table's struct_size covers it and the pointer is not NULL,
   * and reports the feature as not supported otherwise. A driver that
   * implements one must implement it fully. */

  /* The priority of `stream`: the value stream_create gave it, in the
   * device's range (lower is higher priority), as cudaStreamGetPriority.
   * Any thread, also a host function running on `stream`. (v1.1) */
  openreg_status (*stream_get_priority)(openreg_stream stream,
                                        int32_t* priority);
} openreg_driver_api;

#define OPENREG_DRIVER_API_STRUCT_SIZE_V1_0 \
  OPENREG_STRUCT_SIZE(openreg_driver_api, device_synchronize)
#define OPENREG_DRIVER_API_STRUCT_SIZE_V1_1 \
  OPENREG_STRUCT_SIZE(openreg_driver_api, stream_get_priority)

/* ------------------------------------------------------------------------ */
/* Compile-time check of the size constants.                                 */
/* ------------------------------------------------------------------------ */
/* Each struct's newest *_STRUCT_SIZE_V1_<minor> constant must reach its last
 * field: only trailing padding (less than the struct's alignment) may follow.
 * Appending a field without adding the constant of the new minor version (and
 * pointing these checks at it) then fails to compile in every driver and in
 * the core. A field small enough to fit in the padding escapes this check;
 * tests/core/driver/abi_layout_test.cc pins every released offset and size. */
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
                                 OPENREG_DRIVER_API_STRUCT_SIZE_V1_1);

/* The entry point. The core passes its own ABI version; the driver stores a
 * pointer to its static table in *api (valid until the library is unloaded)
 * and returns SUCCESS whatever that version is: the core decides
 * compatibility from the table's abi_version_major/minor, so its error can
 * name both versions. Any other status means the driver cannot be used at
 * all; the core reports it with the driver's last_error_message. */
typedef openreg_status (*openreg_driver_get_api_fn)(
    uint32_t core_abi_major, uint32_t core_abi_minor,
    const openreg_driver_api** api);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPENREG_CORE_DRIVER_OPENREG_DRIVER_H_ */
