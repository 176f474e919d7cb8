#include "core/runtime/thread_state.h"

#include <vector>

#include "core/runtime/stream_registry.h"

namespace openreg {
namespace {

thread_local int32_t current_device = 0;
// Indexed by device; grown on demand so a thread only pays for devices it
// touches.
thread_local std::vector<int64_t> current_streams;

}  // namespace

int32_t CurrentDeviceIndex() { return current_device; }

void SetCurrentDeviceIndex(int32_t device) { current_device = device; }

int64_t CurrentStreamId(int32_t device) {
  if (device < 0 || device >= static_cast<int32_t>(current_streams.size())) {
    return kDefaultStreamId;
  }
  return current_streams[device];
}

void SetCurrentStreamId(int32_t device, int64_t stream_id) {
  if (device >= static_cast<int32_t>(current_streams.size())) {
    current_streams.resize(device + 1, kDefaultStreamId);
  }
  current_streams[device] = stream_id;
}

}  // namespace openreg
