#include "plugins/sim_support/handle_registry.h"

#include <atomic>

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {

namespace {

// Starts at 1 so no handle is NULL; 64 bits never wrap in practice.
std::atomic<uintptr_t> g_next_id{1};

}  // namespace

uintptr_t NextHandleId() {
  return g_next_id.fetch_add(1, std::memory_order_relaxed);
}

openreg_status NotLiveStream(openreg_stream stream, const char* function) {
  if (stream == nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: stream is NULL; the driver ABI has no "
                                "default stream, create one with "
                                "stream_create",
                                function));
  }
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("%s: stream %p is not a live stream of this "
                              "context; it was destroyed, never created, or "
                              "belongs to another context",
                              function, stream));
}

openreg_status NotLiveEvent(openreg_event event, const char* function) {
  if (event == nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: event is NULL; create one with "
                                "event_create",
                                function));
  }
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("%s: event %p is not a live event of this "
                              "context; it was destroyed, never created, or "
                              "belongs to another context",
                              function, event));
}

}  // namespace openreg::sim
