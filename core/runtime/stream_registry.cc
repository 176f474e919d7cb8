#include "core/runtime/stream_registry.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace openreg {

StreamRegistry::StreamRegistry(const Driver& driver, int32_t device_count)
    : driver_(driver), streams_(device_count) {
  for (std::vector<DriverStream>& device_streams : streams_) {
    device_streams.emplace_back();
  }
}

absl::StatusOr<openreg_stream> StreamRegistry::Get(int32_t device, int64_t id) {
  absl::MutexLock lock(&mutex_);
  std::vector<DriverStream>& device_streams = streams_.at(device);
  if (id < 0 || id >= static_cast<int64_t>(device_streams.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "openreg:", device, " has no stream with id ", id, " (ids 0 to ",
        device_streams.size() - 1,
        " exist). Create streams with torch.Stream(device='openreg') rather "
        "than by id."));
  }
  DriverStream& stream = device_streams[id];
  if (!stream) {
    // Only the default stream is created lazily, at the default priority.
    absl::StatusOr<DriverStream> created =
        driver_.CreateStream(device, /*priority=*/0);
    if (!created.ok()) return created.status();
    stream = *std::move(created);
  }
  return stream.get();
}

absl::StatusOr<int64_t> StreamRegistry::Create(int32_t device,
                                               int32_t priority) {
  absl::StatusOr<DriverStream> created = driver_.CreateStream(device, priority);
  if (!created.ok()) return created.status();
  absl::MutexLock lock(&mutex_);
  std::vector<DriverStream>& device_streams = streams_.at(device);
  device_streams.push_back(*std::move(created));
  return static_cast<int64_t>(device_streams.size() - 1);
}

absl::StatusOr<int32_t> StreamRegistry::Priority(int32_t device, int64_t id) {
  // The driver is the authority: it may adjust the priority it was given.
  absl::StatusOr<openreg_stream> handle = Get(device, id);
  if (!handle.ok()) return handle.status();
  return driver_.StreamGetPriority(*handle);
}

std::optional<int64_t> StreamRegistry::IdOf(int32_t device,
                                            openreg_stream handle) {
  absl::MutexLock lock(&mutex_);
  if (device < 0 || device >= static_cast<int32_t>(streams_.size())) {
    return std::nullopt;
  }
  const std::vector<DriverStream>& streams = streams_[device];
  for (size_t id = 0; id < streams.size(); ++id) {
    if (streams[id] && streams[id].get() == handle) {
      return static_cast<int64_t>(id);
    }
  }
  return std::nullopt;
}

std::vector<openreg_stream> StreamRegistry::All(int32_t device) {
  absl::MutexLock lock(&mutex_);
  std::vector<openreg_stream> handles;
  for (const DriverStream& stream : streams_.at(device)) {
    if (stream) handles.push_back(stream.get());
  }
  return handles;
}

}  // namespace openreg
