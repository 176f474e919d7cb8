#include "core/runtime/thread_state.h"

#include <array>

#include "core/runtime/runtime_config.h"
#include "core/runtime/stream_registry.h"

namespace openreg {
namespace {

thread_local int32_t current_device = 0;
// By device. Zero-initialized and trivially destructible, so an access is one
// __tls_get_addr call with no guard (Note [Thread-locals on the launch path]):
// every op asks for its current stream.
static_assert(kDefaultStreamId == 0,
              "current_streams starts with the default stream current");
thread_local std::array<int64_t, kMaxDeviceCount> current_streams{};

}  // namespace

int32_t CurrentDeviceIndex() { return current_device; }

void SetCurrentDeviceIndex(int32_t device) { current_device = device; }

int64_t CurrentStreamId(int32_t device) {
  if (device < 0 || device >= kMaxDeviceCount) return kDefaultStreamId;
  return current_streams[device];
}

void SetCurrentStreamId(int32_t device, int64_t stream_id) {
  current_streams[device] = stream_id;
}

}  // namespace openreg
