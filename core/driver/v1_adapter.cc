#include "core/driver/v1_adapter.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/base/attributes.h"
#include <set>
#include "absl/strings/str_cat.h"
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

// A failure of the 1.x driver: its own message is the newest.
void DriverFailed() { adapter_error.set = false; }

// The 1.x drivers with a live context, by their table.
ABSL_CONST_INIT absl::Mutex open_drivers_mutex(absl::kConstInit);
std::set<const openreg_driver_api_v1*>& OpenDrivers()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(open_drivers_mutex) {
  // Never destroyed: a context may still be destroyed during exit.
  static auto* open = new std::set<const openreg_driver_api_v1*>;
  return *open;
}

openreg_context ToContext(const V1Adapter* adapter) {
  return reinterpret_cast<openreg_context>(const_cast<V1Adapter*>(adapter));
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
  static const V1Adapter& AdapterOf(openreg_context context) {
    return *reinterpret_cast<const V1Adapter*>(context);
  }

  static openreg_status NullContext() {
    return Fail(nullptr, OPENREG_ERROR_INVALID_ARGUMENT,
                "the context is NULL; pass the context that "
                "DriverLibrary::CreateContext returned for this 1.x driver");
  }

  // Forwards a 2.0 call to the 1.x function `V1Function` of the same name,
  // dropping the context.
  template <auto V1Function>
  struct Forward;
  template <typename... Args,
            openreg_status (*openreg_driver_api_v1::*V1Function)(Args...)>
  struct Forward<V1Function> {
    static openreg_status Call(openreg_context context, Args... args) {
      if (context == nullptr) [[unlikely]] return NullContext();
      const openreg_status status =
          (AdapterOf(context).driver_.*V1Function)(args...);
      if (status != OPENREG_SUCCESS && status != OPENREG_ERROR_NOT_READY)
          [[unlikely]] {
        DriverFailed();
      }
      return status;
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
      if (context == nullptr) return NullContext();
      const V1Adapter& adapter = AdapterOf(context);
      const openreg_status status = adapter.driver_.shutdown();
      if (status != OPENREG_SUCCESS) {
        DriverFailed();
        return status;
      }
      absl::MutexLock lock(&open_drivers_mutex);
      OpenDrivers().erase(adapter.driver_table_);
      return status;
    }

    static const char* last_error_message(openreg_context context) {
      if (adapter_error.set &&
          (context == nullptr || adapter_error.adapter == nullptr ||
           adapter_error.adapter == &AdapterOf(context))) {
        return adapter_error.message.c_str();
      }
      if (context == nullptr) return "";
      return AdapterOf(context).driver_.last_error_message();
    }

    static openreg_status stream_get_priority(openreg_context context,
                                              openreg_stream stream,
                                              int32_t* priority) {
      if (context == nullptr) return NullContext();
      const V1Adapter& adapter = AdapterOf(context);
      if (adapter.driver_.stream_get_priority == nullptr) {
        return Fail(&adapter, OPENREG_ERROR_NOT_SUPPORTED,
                    adapter.missing_priority_message_);
      }
      return Forward<&openreg_driver_api_v1::stream_get_priority>::Call(
          context, stream, priority);
    }
  };
};

// The table entry for `name`: V1Calls::Own's function when there is one,
// else the forwarder to the 1.x function of that name. A template lambda so
// that both choices are only looked up for the one taken.
#define OPENREG_V1_ADAPTER_ENTRY(minor, return_type, name, params)        \
  .name = []<typename Own = V1Calls::Own,                                  \
             typename V1 = openreg_driver_api_v1>() {                      \
    if constexpr (requires { &Own::name; }) {                              \
      return &Own::name;                                                   \
    } else {                                                               \
      return &V1Calls::Forward<&V1::name>::Call;                           \
    }                                                                      \
  }(),

V1Adapter::V1Adapter(const openreg_driver_api_v1& driver)
    : driver_table_(&driver),
      driver_(CoveredFields(driver)),
      missing_priority_message_(MissingPriorityMessage(driver)),
      table_{
          .struct_size = sizeof(openreg_driver_api),
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
  {
    absl::MutexLock lock(&open_drivers_mutex);
    if (!OpenDrivers().insert(driver_table_).second) {
      return Fail(
          this, OPENREG_ERROR_NOT_SUPPORTED,
          absl::StrCat(
              "openreg driver '", driver_.driver_name, "' implements driver "
              "ABI ", driver_.abi_version_major, ".", driver_.abi_version_minor,
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
    absl::MutexLock lock(&open_drivers_mutex);
    OpenDrivers().erase(driver_table_);
    return status;
  }
  *context = ToContext(this);
  return OPENREG_SUCCESS;
}

}  // namespace openreg
