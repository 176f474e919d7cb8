#include "plugins/cpu_sim/stream.h"

#include <optional>

namespace openreg::cpu_sim {

openreg_status StreamTable::Create(int32_t device, int32_t priority,
                                   openreg_stream* stream) {
  *stream = registry_.Add(
      StreamInfo{device, priority, std::make_shared<absl::Mutex>()});
  return OPENREG_SUCCESS;
}

openreg_status StreamTable::Destroy(openreg_stream stream) {
  if (!registry_.Remove(stream)) {
    return sim::NotLiveStream(stream, "stream_destroy");
  }
  return OPENREG_SUCCESS;
}

openreg_status StreamTable::Lookup(openreg_stream stream, const char* function,
                                   StreamInfo* info) const {
  std::optional<StreamInfo> found = registry_.Find(stream);
  if (!found.has_value()) return sim::NotLiveStream(stream, function);
  // Moved: every launch looks its stream up, and a copy would touch the
  // execution mutex's reference count twice more.
  *info = *std::move(found);
  return OPENREG_SUCCESS;
}

openreg_status StreamTable::CheckLive(openreg_stream stream,
                                  const char* function) const {
  StreamInfo info;
  return Lookup(stream, function, &info);
}

}  // namespace openreg::cpu_sim
