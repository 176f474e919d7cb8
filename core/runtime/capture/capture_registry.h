// Which streams are capturing, and into which graph (Note [Graph capture]).
//
// A stream captures from capture begin until capture end or abandonment;
// a stream that waits on an event recorded during a capture joins it. The
// core asks here, on every enqueue, whether the stream is capturing: with no
// capture anywhere that costs one relaxed atomic load.
//
// Thread-safety: all methods may be called from any thread; one mutex guards
// the map.
#ifndef OPENREG_CORE_RUNTIME_CAPTURE_CAPTURE_REGISTRY_H_
#define OPENREG_CORE_RUNTIME_CAPTURE_CAPTURE_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "core/runtime/capture/captured_graph.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

class CaptureRegistry {
 public:
  // The process's registry, never destroyed.
  static CaptureRegistry& Get();

  // Whether any stream captures: the fast path of every check.
  bool AnyCapturing() const {
    return capturing_.load(std::memory_order_relaxed) > 0;
  }

  // The graph `stream` captures into, or null.
  std::shared_ptr<CapturedGraph> GraphOf(openreg_stream stream) const;
  // A graph capturing on any stream of `device`, or null.
  std::shared_ptr<CapturedGraph> GraphOnDevice(int32_t device) const;
  // The capturing graph that recorded `event`, or null.
  std::shared_ptr<CapturedGraph> GraphWithEvent(openreg_event event) const;

  // `stream` (of `device`) starts capturing into `graph`; fails when it
  // already captures.
  absl::Status Begin(openreg_stream stream, int32_t device,
                     std::shared_ptr<CapturedGraph> graph);
  // `stream` joins `graph`'s capture (it waited on an event of it).
  void Join(openreg_stream stream, int32_t device,
            std::shared_ptr<CapturedGraph> graph);
  // Every stream capturing into `graph` stops.
  void End(const CapturedGraph& graph);

  // Abandons the capture `stream` takes part in, if any, with `reason`, and
  // stops its streams: the device runs work eagerly again. Returns whether
  // there was one.
  bool AbandonCaptureOf(openreg_stream stream, const std::string& reason);
  // The same for every capture on `device`.
  bool AbandonCapturesOn(int32_t device, const std::string& reason);

 private:
  struct Entry {
    int32_t device;
    std::shared_ptr<CapturedGraph> graph;
  };

  mutable absl::Mutex mutex_;
  absl::flat_hash_map<openreg_stream, Entry> streams_ ABSL_GUARDED_BY(mutex_);
  // streams_.size(), readable without the lock.
  std::atomic<int> capturing_{0};
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_CAPTURE_CAPTURE_REGISTRY_H_
