#include "plugins/cpu_sim/stream.h"

#include <optional>

#include "absl/strings/str_format.h"
#include "plugins/sim_support/error.h"

namespace openreg::cpu_sim {

using sim::Fail;

namespace {

openreg_status NotLive(openreg_stream stream, const char* function) {
  if (stream == nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: stream is NULL; the driver ABI has no "
                                "default stream, create one with "
                                "stream_create",
                                function));
  }
  return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
              absl::StrFormat("%s: stream %p is not a live stream; it was "
                              "destroyed, never created, or created before "
                              "the last shutdown",
                              function, stream));
}

}  // namespace

openreg_status StreamTable::Create(int32_t device, int32_t priority,
                                   openreg_stream* stream) {
  if (priority < kGreatestStreamPriority || priority > kLeastStreamPriority) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("stream_create: priority %d is outside the "
                                "valid range [%d, %d] of device %d (lower is "
                                "higher priority, %d is the default)",
                                priority, kGreatestStreamPriority,
                                kLeastStreamPriority, device,
                                kLeastStreamPriority));
  }
  *stream = registry_.Add(
      StreamInfo{device, priority, std::make_shared<absl::Mutex>()});
  return OPENREG_SUCCESS;
}

openreg_status StreamTable::Destroy(openreg_stream stream) {
  if (!registry_.Remove(stream)) return NotLive(stream, "stream_destroy");
  return OPENREG_SUCCESS;
}

openreg_status StreamTable::Lookup(openreg_stream stream, const char* function,
                                   StreamInfo* info) const {
  const std::optional<StreamInfo> found = registry_.Find(stream);
  if (!found.has_value()) return NotLive(stream, function);
  *info = *found;
  return OPENREG_SUCCESS;
}

openreg_status StreamTable::CheckLive(openreg_stream stream,
                                  const char* function) const {
  StreamInfo info;
  return Lookup(stream, function, &info);
}

}  // namespace openreg::cpu_sim
