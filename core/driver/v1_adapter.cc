#include "core/driver/v1_adapter.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace openreg {
namespace {

// The calling thread's last failure when the adapter, not the 1.x driver,
// has its message (see the header). `adapter` is the adapter that failed.
struct AdapterError {
  bool set = false;
  const V1Adapter* adapter = nullptr;
  std::string message;
};
thread_local AdapterError adapter_error;

openreg_status Fail(const V1Adapter* adapter, openreg_status status,
                    std::string message) {
  adapter_error.set = true;
  adapter_error.adapter = adapter;
  adapter_error.message = std::move(message);
  return status;
}

// A 1.x driver's `status`, passed on. On a failure its own message is the
// newest.
openreg_status FromDriver(openreg_status status) {
  if (status != OPENREG_SUCCESS && status != OPENREG_ERROR_NOT_READY)
      [[unlikely]] {
    adapter_error.set = false;
  }
  return status;
}

// The live contexts of every adapter, looked up by every function without a
// lock. A 1.x driver has at most one context (see the header), so a few
// slots serve every 1.x driver a process opens at once; a context is the
// number `generation << kSlotBits | slot`, with a generation never used
// before. A slot holds the number of its live context, so a NULL, destroyed
// or made-up context is a mismatch, never a read of freed memory (nor a call
// into a 1.x driver after its shutdown): a destroyed context's generation
// never comes back. Allocated once and never freed: a context may still be
// used during exit.
constexpr int kSlotBits = 6;
constexpr size_t kSlotCount = size_t{1} << kSlotBits;

struct ContextSlot {
  // The live context in this slot, or 0. Stored (release) after `adapter`.
  std::atomic<uintptr_t> context{0};
  std::atomic<const V1Adapter*> adapter{nullptr};
};

struct LiveContexts {
  ContextSlot slots[kSlotCount];
  // Guards what follows and every store to `slots`.
  absl::Mutex mu;
  uintptr_t next_generation ABSL_GUARDED_BY(mu) = 1;
  // The 1.x drivers with a live (or initializing) context, by their table;
  // at most kSlotCount, so each finds a free slot.
  absl::flat_hash_set<const openreg_driver_api_v1*> open_drivers
      ABSL_GUARDED_BY(mu);
};

LiveContexts& Live() {
  static auto* live = new LiveContexts;
  return *live;
}

uintptr_t Handle(openreg_context context) {
  return reinterpret_cast<uintptr_t>(context);
}

ContextSlot& SlotOf(LiveContexts& live, openreg_context context) {
  return live.slots[Handle(context) & (kSlotCount - 1)];
}

// The adapter of the live context `context`, or null. Takes no lock: the ABI
// lets no call on a context run concurrently with its context_destroy.
const V1Adapter* FindAdapter(openreg_context context) {
  const ContextSlot& slot = SlotOf(Live(), context);
  if (context == nullptr ||
      slot.context.load(std::memory_order_acquire) != Handle(context)) {
    return nullptr;
  }
  return slot.adapter.load(std::memory_order_relaxed);
}

openreg_driver_api_v1 CoveredFields(const openreg_driver_api_v1& driver) {
  openreg_driver_api_v1 copy{};
  std::memcpy(&copy, &driver, std::min(driver.struct_size, sizeof(copy)));
  return copy;
}

std::string MissingPriorityMessage(const openreg_driver_api_v1& driver) {
  if (driver.struct_size < OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_1) {
    return absl::StrCat(
        "openreg driver '", driver.driver_name, "' implements driver ABI 1.",
        driver.abi_version_minor,
        "; stream_get_priority needs ABI 1.1 (the driver's function table, ",
        driver.struct_size,
        " bytes, ends before it) — update the driver to one built for ABI "
        "1.1 or later, or to ABI 2.0, where it is required.");
  }
  if (driver.stream_get_priority == nullptr) {
    return absl::StrCat(
        "openreg driver '", driver.driver_name, "' (driver ABI 1.",
        driver.abi_version_minor,
        ") does not implement the optional function stream_get_priority: its "
        "table entry is NULL.");
  }
  return "";
}

}  // namespace

// The functions of the adapter's table.
struct V1Calls {
  // The adapter of the live context `context`, or null after failing with
  // INVALID_ARGUMENT. The only work the forwarding functions add to a call.
  static const V1Adapter* AdapterOf(openreg_context context) {
    const V1Adapter* adapter = FindAdapter(context);
    if (adapter == nullptr) [[unlikely]] {
      NotLive(context);
    }
    return adapter;
  }

  static openreg_status NotLive(openreg_context context) {
    if (context == nullptr) {
      return Fail(nullptr, OPENREG_ERROR_INVALID_ARGUMENT,
                  "the context is NULL; pass the context that "
                  "DriverLibrary::CreateContext returned for this 1.x "
                  "driver");
    }
    return Fail(
        nullptr, OPENREG_ERROR_INVALID_ARGUMENT,
        absl::StrFormat("context %p is not a live context of an adapted 1.x "
                        "driver: it was destroyed by context_destroy (the 1.x "
                        "driver's shutdown) or never returned by "
                        "DriverLibrary::CreateContext; pass a live one",
                        context));
  }

  // Forwards a 2.0 call to the 1.x function `V1Function` of the same name,
  // dropping the context.
  template <auto V1Function>
  struct Forward;
  template <typename... Args,
            openreg_status (*openreg_driver_api_v1::*V1Function)(Args...)>
  struct Forward<V1Function> {
    static openreg_status Call(openreg_context context, Args... args) {
      const V1Adapter* adapter = AdapterOf(context);
      if (adapter == nullptr) [[unlikely]] {
        return OPENREG_ERROR_INVALID_ARGUMENT;
      }
      return FromDriver((adapter->driver_.*V1Function)(args...));
    }
  };

  // The functions whose 1.x counterparts differ; every other entry is a
  // Forward.
  struct Own {
    static openreg_status context_create(const openreg_driver_config*,
                                         openreg_context* context) {
      if (context != nullptr) *context = nullptr;
      return Fail(nullptr, OPENREG_ERROR_NOT_SUPPORTED,
                  "the table of a 1.x driver adapted to ABI 2.0 cannot create "
                  "a context itself (it would not know which driver to "
                  "initialize); create it with DriverLibrary::CreateContext");
    }

    static openreg_status context_destroy(openreg_context context) {
      const V1Adapter* adapter = AdapterOf(context);
      if (adapter == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
      const openreg_status status = FromDriver(adapter->driver_.shutdown());
      if (status != OPENREG_SUCCESS) return status;
      LiveContexts& live = Live();
      absl::MutexLock lock(&live.mu);
      ContextSlot& slot = SlotOf(live, context);
      slot.context.store(0, std::memory_order_release);
      slot.adapter.store(nullptr, std::memory_order_relaxed);
      live.open_drivers.erase(adapter->driver_table_);
      return status;
    }

    static const char* last_error_message(openreg_context context) {
      const V1Adapter* adapter = FindAdapter(context);
      if (adapter_error.set &&
          (adapter == nullptr || adapter_error.adapter == nullptr ||
           adapter_error.adapter == adapter)) {
        return adapter_error.message.c_str();
      }
      if (adapter == nullptr) return "";
      return adapter->driver_.last_error_message();
    }

    static openreg_status stream_get_priority(openreg_context context,
                                              openreg_stream stream,
                                              int32_t* priority) {
      const V1Adapter* adapter = AdapterOf(context);
      if (adapter == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
      if (adapter->driver_.stream_get_priority == nullptr) {
        return Fail(adapter, OPENREG_ERROR_NOT_SUPPORTED,
                    adapter->missing_priority_message_);
      }
      return FromDriver(adapter->driver_.stream_get_priority(stream, priority));
    }

    // ABI 1.x has no separate execution view: its device memory is
    // host-accessible at its device address, which is offset 0.
    static openreg_status device_execution_offset(openreg_context context,
                                                  int32_t device,
                                                  intptr_t* offset) {
      const V1Adapter* adapter = AdapterOf(context);
      if (adapter == nullptr) return OPENREG_ERROR_INVALID_ARGUMENT;
      if (offset == nullptr) {
        return Fail(adapter, OPENREG_ERROR_INVALID_ARGUMENT,
                    "device_execution_offset: 'offset' is NULL; pass the "
                    "address of a variable to receive the offset");
      }
      int32_t count = 0;
      if (const openreg_status status =
              FromDriver(adapter->driver_.get_device_count(&count));
          status != OPENREG_SUCCESS) {
        return status;
      }
      if (device < 0 || device >= count) {
        return Fail(adapter, OPENREG_ERROR_INVALID_DEVICE,
                    absl::StrCat("device_execution_offset: device ", device,
                                 " does not exist; valid devices are 0 to ",
                                 count - 1));
      }
      *offset = 0;
      return OPENREG_SUCCESS;
    }
  };
};

// The table entry for `name`: V1Calls::Own's function when there is one,
// else the forwarder to the 1.x function of that name, else NULL: a later
// optional group that 1.x has no counterpart of (2.2's activity recording)
// is absent. A template lambda so that the choices are only looked up for
// the one taken.
// clang-format off
#define OPENREG_V1_ADAPTER_ENTRY(minor, return_type, name, params)        \
  .name = []<typename Own = V1Calls::Own,                                  \
             typename V1 = openreg_driver_api_v1>() {                      \
    if constexpr (requires { &Own::name; }) {                              \
      return &Own::name;                                                   \
    } else if constexpr (requires { &V1::name; }) {                        \
      return &V1Calls::Forward<&V1::name>::Call;                           \
    } else {                                                               \
      return static_cast<return_type(*) params>(nullptr);                  \
    }                                                                      \
  }(),
// clang-format on

V1Adapter::V1Adapter(const openreg_driver_api_v1& driver)
    : driver_table_(&driver),
      driver_(CoveredFields(driver)),
      missing_priority_message_(MissingPriorityMessage(driver)),
      table_{.struct_size = sizeof(openreg_driver_api),
             .abi_version_major = OPENREG_DRIVER_ABI_VERSION_MAJOR,
             .abi_version_minor = OPENREG_DRIVER_ABI_VERSION_MINOR,
             .driver_name = driver.driver_name,
             .driver_version = driver.driver_version,
             OPENREG_DRIVER_FUNCTIONS(OPENREG_V1_ADAPTER_ENTRY)} {}

#undef OPENREG_V1_ADAPTER_ENTRY

openreg_status V1Adapter::CreateContext(const openreg_driver_config* config,
                                        openreg_context* context) const {
  if (context == nullptr) {
    return Fail(this, OPENREG_ERROR_INVALID_ARGUMENT,
                "'context' is NULL; pass the address of a variable to "
                "receive the new context");
  }
  *context = nullptr;
  LiveContexts& live = Live();
  {
    absl::MutexLock lock(&live.mu);
    if (live.open_drivers.size() == kSlotCount &&
        !live.open_drivers.contains(driver_table_)) {
      return Fail(
          this, OPENREG_ERROR_NOT_SUPPORTED,
          absl::StrCat("openreg driver '", driver_.driver_name,
                       "' implements driver ABI ", driver_.abi_version_major,
                       ".", driver_.abi_version_minor, ", and ", kSlotCount,
                       " other 1.x drivers already have a context, the most "
                       "the adapter runs at once; destroy one of their "
                       "contexts first, or update the driver to ABI 2.0."));
    }
    if (!live.open_drivers.insert(driver_table_).second) {
      return Fail(
          this, OPENREG_ERROR_NOT_SUPPORTED,
          absl::StrCat(
              "openreg driver '", driver_.driver_name,
              "' implements driver ABI ", driver_.abi_version_major, ".",
              driver_.abi_version_minor,
              ", which has one process-wide instance, and a context of it "
              "already exists; destroy that context first, or update the "
              "driver to ABI 2.0, which allows any number of contexts."));
    }
  }
  const openreg_status status = driver_.init(config);
  if (status != OPENREG_SUCCESS) {
    // Kept now: with no context, last_error_message cannot reach the
    // driver's message later.
    Fail(this, status, driver_.last_error_message());
    absl::MutexLock lock(&live.mu);
    live.open_drivers.erase(driver_table_);
    return status;
  }
  absl::MutexLock lock(&live.mu);
  // Free, as each open driver holds at most one slot (see LiveContexts).
  size_t free_slot = 0;
  while (live.slots[free_slot].context.load(std::memory_order_relaxed) != 0) {
    ++free_slot;
  }
  const uintptr_t handle = live.next_generation++ << kSlotBits | free_slot;
  ContextSlot& slot = live.slots[free_slot];
  slot.adapter.store(this, std::memory_order_relaxed);
  slot.context.store(handle, std::memory_order_release);
  *context = reinterpret_cast<openreg_context>(handle);
  return OPENREG_SUCCESS;
}

}  // namespace openreg
