// The streams of every device, by id.
//
// PyTorch names a stream by (device, StreamId); the driver by an opaque
// handle. This registry maps one to the other. Id 0 of each device is its
// default stream; every other stream gets the next id of its device. Driver
// streams live as long as the process, as CUDA's pooled streams do, so an id
// handed to Python stays valid.
//
// Ownership: the registry owns every stream (DriverStream) and hands out raw
// handles that stay valid for its lifetime; `driver` must outlive it.
//
// Thread-safety: all methods may be called concurrently; `mutex_` guards the
// tables. Handles are immutable once created.
#ifndef OPENREG_CORE_RUNTIME_STREAM_REGISTRY_H_
#define OPENREG_CORE_RUNTIME_STREAM_REGISTRY_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/driver/driver.h"

namespace openreg {

inline constexpr int64_t kDefaultStreamId = 0;

class StreamRegistry {
 public:
  StreamRegistry(const Driver& driver, int32_t device_count);
  StreamRegistry(const StreamRegistry&) = delete;
  StreamRegistry& operator=(const StreamRegistry&) = delete;

  // The driver stream for `id` on `device`, creating the default stream on
  // first use. An unknown id is kInvalidArgument.
  absl::StatusOr<openreg_stream> Get(int32_t device, int64_t id);

  // Creates a stream with `priority` (the driver's convention: lower is
  // higher priority) and returns its id.
  absl::StatusOr<int64_t> Create(int32_t device, int32_t priority);

  // The priority of stream `id` as the driver reports it (the optional
  // stream_get_priority of ABI 1.1): kUnimplemented, naming the driver and
  // its ABI version, for a driver without it.
  absl::StatusOr<int32_t> Priority(int32_t device, int64_t id);

  // The id of `handle`, a stream of `device`, or nullopt for a handle the
  // registry did not make (the profiler names streams by id).
  std::optional<int64_t> IdOf(int32_t device, openreg_stream handle);

  // Streams created so far on `device`, default included once created.
  std::vector<openreg_stream> All(int32_t device);

 private:
  const Driver& driver_;
  absl::Mutex mutex_;
  // Per device; index = stream id. Slot 0 is empty until the default stream
  // is created.
  std::vector<std::vector<DriverStream>> streams_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_STREAM_REGISTRY_H_
