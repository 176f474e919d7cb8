#include "core/runtime/stream_registry.h"

#include "absl/strings/str_cat.h"

namespace openreg {

StreamRegistry::StreamRegistry(const Driver& driver, int32_t device_count)
    : driver_(driver), streams_(device_count) {
  for (std::vector<Entry>& device_streams : streams_) {
    device_streams.push_back(Entry{nullptr, 0});
  }
}

absl::StatusOr<openreg_stream> StreamRegistry::Get(int32_t device, int64_t id) {
  absl::MutexLock lock(&mutex_);
  std::vector<Entry>& device_streams = streams_.at(device);
  if (id < 0 || id >= static_cast<int64_t>(device_streams.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "openreg:", device, " has no stream with id ", id, " (ids 0 to ",
        device_streams.size() - 1,
        " exist). Create streams with torch.Stream(device='openreg') rather "
        "than by id."));
  }
  Entry& entry = device_streams[id];
  if (entry.handle == nullptr) {
    // Only the default stream is created lazily.
    absl::StatusOr<openreg_stream> created = driver_.StreamCreate(device, 0);
    if (!created.ok()) return created.status();
    entry.handle = *created;
  }
  return entry.handle;
}

absl::StatusOr<int64_t> StreamRegistry::Create(int32_t device,
                                               int32_t priority) {
  absl::StatusOr<openreg_stream> created =
      driver_.StreamCreate(device, priority);
  if (!created.ok()) return created.status();
  absl::MutexLock lock(&mutex_);
  std::vector<Entry>& device_streams = streams_.at(device);
  device_streams.push_back(Entry{*created, priority});
  return static_cast<int64_t>(device_streams.size() - 1);
}

absl::StatusOr<int32_t> StreamRegistry::Priority(int32_t device, int64_t id) {
  absl::MutexLock lock(&mutex_);
  const std::vector<Entry>& device_streams = streams_.at(device);
  if (id < 0 || id >= static_cast<int64_t>(device_streams.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("openreg:", device, " has no stream with id ", id));
  }
  return device_streams[id].priority;
}

std::vector<openreg_stream> StreamRegistry::All(int32_t device) {
  absl::MutexLock lock(&mutex_);
  std::vector<openreg_stream> handles;
  for (const Entry& entry : streams_.at(device)) {
    if (entry.handle != nullptr) handles.push_back(entry.handle);
  }
  return handles;
}

}  // namespace openreg
