// Note [Graph capture]
//
// A CapturedGraph is the work the core enqueued on capturing streams between
// capture begin and end, recorded instead of run: host-function work (the
// closures every op enqueues, which own the memory they touch), copies, and
// the event records and waits that join streams. Recording lives in the core,
// not in the driver ABI, so capture works on every driver, the minimal one
// included: the core already funnels all device work through a handful of
// enqueue calls (docs/graphs.md says why this was chosen over driver entry
// points).
//
// Replay runs the recording with one host-function launch per stream segment:
// a stream's work between two cross-stream joins runs in one launch, so a
// single-stream graph is one launch in all. Copies run inside those launches
// as plain memory copies at the addresses code on the driver's threads uses
// (Runtime::execution_offset). Joins become real driver events recorded and
// waited on between the launches, in capture order.
//
// Random ops: a kernel recorded during capture owns a CPU generator. Each
// replay draws fresh seeds from the device generators on the replaying
// thread, in capture order, and the replay's first launch reseeds the
// kernels' generators before anything runs, so every replay gives new
// numbers and every driver the same ones.
//
// Host steps per replay: recorded work whose host-side issue must happen
// again at every replay (a collective takes its place in the process group's
// order of collectives when issued, see core/distributed/issue_order.h)
// registers an issue function; replay runs them on the replaying thread, in
// capture order, before enqueueing anything.
//
// Thread-safety: recording (Add*) and Abandon may be called from any thread;
// a mutex guards the recording until Finish(). After Finish() the graph is
// immutable and segments may run on a driver's threads while another replay
// is being enqueued: replays of one graph are ordered by its streams.
#ifndef OPENREG_CORE_RUNTIME_CAPTURE_CAPTURED_GRAPH_H_
#define OPENREG_CORE_RUNTIME_CAPTURE_CAPTURED_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

// Host-function work recorded from an op.
struct CapturedWork {
  std::string name;
  absl::AnyInvocable<void()> run;
};

// A copy, with both addresses as code on a driver's thread reaches them.
struct CapturedCopy {
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
  int32_t kind = OPENREG_MEMCPY_DEVICE_TO_DEVICE;
};

// The work of one stream between two joins: runs as one launch.
struct CapturedSegment {
  std::vector<std::variant<CapturedWork, CapturedCopy>> nodes;
};

// Runs a segment's nodes in order; on the driver's thread, inside a launch.
// Each recorded piece of work runs through `run_work`, which calls it; the
// graph's replay judges each kernel's OpenMP width there.
void RunSegment(CapturedSegment& segment,
                absl::FunctionRef<void(CapturedWork&)> run_work);

// A source of fresh random state per replay: `draw` runs on the replaying
// thread (it takes a seed from a device generator), `reseed` on the driver's
// thread before the replay's work (it seeds one kernel's generator).
struct CapturedRandomness {
  std::function<uint64_t()> draw;
  std::function<void(uint64_t)> reseed;
};

class CapturedGraph {
 public:
  // One step of a replay, in capture order.
  struct Launch {
    int stream = 0;  // index into streams()
    std::shared_ptr<CapturedSegment> segment;
  };
  struct RecordEvent {
    int stream = 0;
    int event = 0;  // index of the graph's event
  };
  struct WaitEvent {
    int stream = 0;
    int event = 0;
  };
  using Step = std::variant<Launch, RecordEvent, WaitEvent>;

  struct StreamInfo {
    openreg_stream captured = nullptr;  // the stream it was captured on
    int32_t device = 0;
  };

  // Capture begins on `origin` of `device`; allocations of the capture come
  // from the private pool `pool`.
  CapturedGraph(openreg_stream origin, int32_t device,
                std::pair<uint64_t, uint64_t> pool);

  // Recording; each fails with kFailedPrecondition once the capture was
  // abandoned or finished.
  absl::Status AddWork(openreg_stream stream, absl::string_view name,
                       absl::AnyInvocable<void()> run);
  absl::Status AddCopy(openreg_stream stream, const CapturedCopy& copy);
  absl::Status AddRandomness(CapturedRandomness randomness);
  // `issue` runs on the replaying thread at every replay, in capture order.
  absl::Status AddReplayIssue(std::function<void()> issue);
  // `event` recorded on capturing `stream`.
  absl::Status AddEventRecord(openreg_stream stream, openreg_event event);
  // Capturing or joining `stream` waits for `event`, which must have been
  // recorded in this capture (HasEvent).
  absl::Status AddEventWait(openreg_stream stream, int32_t device,
                            openreg_event event);
  // Whether `event` was recorded in this capture (its latest record).
  bool HasEvent(openreg_event event) const;
  // `event` was recorded outside the capture, or destroyed (its handle may
  // be reused): later waits on it are not on this capture's record.
  void ForgetEvent(openreg_event event);

  // Stops recording for good, remembering why; later Add* calls fail and
  // Finish() reports `reason`. Only the first reason is kept.
  void Abandon(std::string reason);
  std::optional<std::string> abandoned_reason() const;

  // Ends the capture: checks that every joined stream rejoined the origin,
  // then builds the replay steps. Fails (and abandons) otherwise.
  absl::Status Finish();

  // After a successful Finish().
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<StreamInfo>& streams() const { return streams_; }
  int event_count() const { return event_count_; }
  // Draws one seed per recorded random kernel (on the replaying thread) and
  // returns the function that applies them (on the first launch's thread).
  std::function<void()> DrawRandomness() const;
  // Runs every recorded issue function, in capture order (replaying thread).
  void IssueForReplay() const;
  // Launches per replay, nodes, and a readable listing of every step.
  int launch_count() const;
  int node_count() const;
  std::string DebugString() const;

  int32_t device() const { return device_; }
  std::pair<uint64_t, uint64_t> pool() const { return pool_; }

 private:
  // A recorded item, in capture order.
  struct Item {
    int stream = 0;
    enum Kind { kNode, kRecord, kWait } kind = kNode;
    std::variant<CapturedWork, CapturedCopy> node;  // kNode
    int event = 0;                                  // kRecord / kWait
  };

  absl::Status CheckRecording() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  int StreamIndex(openreg_stream stream, int32_t device)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  absl::Status CheckJoined() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const int32_t device_;
  const std::pair<uint64_t, uint64_t> pool_;

  mutable absl::Mutex mutex_;
  bool finished_ ABSL_GUARDED_BY(mutex_) = false;
  std::optional<std::string> abandoned_ ABSL_GUARDED_BY(mutex_);
  std::vector<Item> items_ ABSL_GUARDED_BY(mutex_);
  // The graph's event index of each driver event's latest record.
  absl::flat_hash_map<openreg_event, int> events_ ABSL_GUARDED_BY(mutex_);
  // Written under mutex_ while recording; immutable after Finish().
  std::vector<StreamInfo> streams_;
  std::vector<CapturedRandomness> randomness_;
  std::vector<std::function<void()>> replay_issues_;
  int event_count_ = 0;
  std::vector<Step> steps_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_CAPTURE_CAPTURED_GRAPH_H_
