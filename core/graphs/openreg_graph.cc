#include "core/graphs/openreg_graph.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <fstream>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "core/runtime/capture/capture_registry.h"
#include "core/runtime/runtime.h"
#include "core/runtime/thread_state.h"
#include "core/torch_runtime/driver_thread_width.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_capture.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"
#include "third_party/openmp/thread_workers.h"

namespace openreg {

struct OpenRegGraph::Executable {
  std::vector<DriverStream> side_streams;  // stream i + 1 of the recording
  std::vector<DriverEvent> events;
  // Whether a replay's work ran on a thread other than the one that
  // replayed it (a driver with threads of its own); set by that work.
  std::atomic<bool> runs_on_driver_threads{false};
};

namespace {

// Ids of pools graphs create for themselves: (id, 0), apart from any pool
// id a user passes in.
c10::MempoolId_t NewPoolId() {
  static std::atomic<uint64_t> next{1};
  return {next.fetch_add(1), 0};
}

}  // namespace

OpenRegGraph::OpenRegGraph(const at::GraphImplArgs& args)
    : keep_graph_(args.keep_graph) {}

OpenRegGraph::~OpenRegGraph() {
  // A destructor must not throw: an abandoned reset is reported nowhere.
  try {
    reset();
  } catch (const std::exception&) {
  }
}

void OpenRegGraph::capture_begin(c10::MempoolId_t pool,
                                 at::GraphCaptureMode /*mode*/) {
  TORCH_CHECK(capture_ == nullptr && graph_ == nullptr,
              "capture_begin: this graph already holds a capture; call "
              "reset() before capturing again");
  const c10::DeviceIndex device =
      static_cast<c10::DeviceIndex>(CurrentDeviceIndex());
  Runtime& runtime = RuntimeForDevice(device);
  const openreg_stream stream = CurrentDriverStream(device);
  const c10::MempoolId_t id =
      pool.first == 0 && pool.second == 0 ? NewPoolId() : pool;
  runtime.device_memory().UsePrivatePool(device, id);
  pool_ = id;
  pool_device_ = device;
  abandoned_.reset();
  auto capture = std::make_shared<CapturedGraph>(stream, device, id);
  const absl::Status begun =
      CaptureRegistry::Get().Begin(stream, device, capture);
  if (!begun.ok()) {
    ReleasePool();
    ThrowStatus(begun);
  }
  capture_ = std::move(capture);
}

void OpenRegGraph::capture_end() {
  TORCH_CHECK(capture_ != nullptr,
              "capture_end: no capture is underway on this graph; call "
              "capture_begin first");
  std::shared_ptr<CapturedGraph> capture = std::move(capture_);
  CaptureRegistry::Get().End(*capture);
  if (std::optional<std::string> reason = capture->abandoned_reason()) {
    // The error was raised where the capture broke; ending it must not
    // raise again (torch.accelerator.Graph's __exit__ calls capture_end
    // while that error propagates). replay() reports it.
    abandoned_ = std::move(reason);
    ReleasePool();
    return;
  }
  const absl::Status finished = capture->Finish();
  if (!finished.ok()) {
    abandoned_ = std::string(finished.message());
    ReleasePool();
    TORCH_CHECK(false, "openreg: ", finished.message());
  }
  graph_ = std::move(capture);
  if (!keep_graph_) instantiate();
}

void OpenRegGraph::instantiate() {
  TORCH_CHECK(
      graph_ != nullptr,
      "instantiate: this graph holds no capture; capture one first "
      "(capture_begin ... capture_end)",
      abandoned_.has_value() ? "; the last capture was abandoned: " : "",
      abandoned_.value_or(""));
  const Driver& driver = RuntimeForDevice(graph_->device()).driver();
  auto executable = std::make_shared<Executable>();
  const std::vector<CapturedGraph::StreamInfo>& streams = graph_->streams();
  for (size_t i = 1; i < streams.size(); ++i) {
    executable->side_streams.push_back(
        ValueOrThrow(driver.CreateStream(streams[i].device, /*priority=*/0)));
  }
  for (int i = 0; i < graph_->event_count(); ++i) {
    executable->events.push_back(
        ValueOrThrow(driver.CreateEvent(graph_->device())));
  }
  executable_ = std::move(executable);
}

void OpenRegGraph::replay() {
  TORCH_CHECK(graph_ != nullptr,
              "replay: this graph holds no capture to replay",
              abandoned_.has_value() ? "; its capture was abandoned: "
                                     : " (capture one first)",
              abandoned_.value_or(""));
  if (executable_ == nullptr) instantiate();
  const c10::DeviceIndex device =
      static_cast<c10::DeviceIndex>(graph_->device());
  const openreg_stream origin = CurrentDriverStream(device);
  const std::shared_ptr<Executable>& executable = executable_;
  // Note [The replaying thread's OpenMP workers]: a replay hands the device
  // a whole step, and the replaying thread mostly waits for it. When the
  // driver runs that work on threads of its own, the replaying thread's idle
  // OpenMP pool (made by any parallel CPU op it ran before) only inflates
  // libgomp's count of pooled threads past the cores, which makes every
  // OpenMP barrier in the process sleep instead of spin: the replayed
  // kernels' parallel regions then each pay futex wake-ups on the driver's
  // thread (measured: 41 voluntary context switches per replay of the
  // example's training step on threaded_sim, 1 without the pool; see
  // docs/graphs.md). So the pool is given back here; CPU work on this thread
  // makes a new one when it needs it. Never on a driver that runs the replay
  // on this thread: the replayed kernels use this thread's pool themselves.
  if (executable->runs_on_driver_threads.load(std::memory_order_relaxed)) {
    openmp::ReleaseCallingThreadWorkers();
  }
  const std::thread::id replaying_thread = std::this_thread::get_id();
  auto stream_of = [&](int index) {
    return index == 0 ? origin : executable->side_streams[index - 1].get();
  };
  // Seeds are drawn here, in capture order, and applied by the first launch;
  // recorded collectives take their places in the process group's order.
  std::function<void()> reseed = graph_->DrawRandomness();
  graph_->IssueForReplay();
  for (const CapturedGraph::Step& step : graph_->steps()) {
    if (const auto* launch = std::get_if<CapturedGraph::Launch>(&step)) {
      // The closure keeps the recording, and the streams and events the
      // replay uses, alive until it has run.
      EnqueueWork(device, stream_of(launch->stream), "graph replay",
                  [graph = graph_, executable, segment = launch->segment,
                   reseed = std::move(reseed), replaying_thread] {
                    if (std::this_thread::get_id() != replaying_thread &&
                        !executable->runs_on_driver_threads.load(
                            std::memory_order_relaxed)) {
                      executable->runs_on_driver_threads.store(
                          true, std::memory_order_relaxed);
                    }
                    if (reseed) reseed();
                    // Each kernel gets the OpenMP width of its kind, not of
                    // the whole segment (Note [OpenMP width of driver
                    // threads]).
                    RunSegment(*segment, [](CapturedWork& work) {
                      DriverThreadWorkPart part;
                      work.run();
                    });
                  });
      reseed = nullptr;
    } else if (const auto* record =
                   std::get_if<CapturedGraph::RecordEvent>(&step)) {
      RecordEventOn(device, executable->events[record->event].get(),
                    stream_of(record->stream));
    } else {
      const auto& wait = std::get<CapturedGraph::WaitEvent>(step);
      WaitEventOn(device, stream_of(wait.stream),
                  executable->events[wait.event].get());
    }
  }
}

void OpenRegGraph::reset() {
  if (capture_ != nullptr) {
    capture_->Abandon("reset() during capture");
    CaptureRegistry::Get().End(*capture_);
    capture_.reset();
  }
  graph_.reset();
  executable_.reset();
  abandoned_.reset();
  ReleasePool();
}

void OpenRegGraph::ReleasePool() {
  if (!pool_.has_value()) return;
  const c10::MempoolId_t pool = *pool_;
  pool_.reset();
  ThrowIfError(RuntimeForDevice(pool_device_)
                   .device_memory()
                   .ReleasePrivatePool(pool_device_, pool));
}

c10::MempoolId_t OpenRegGraph::pool() const {
  TORCH_CHECK(pool_.has_value(),
              "pool: this graph has no memory pool yet; it gets one at "
              "capture_begin");
  return *pool_;
}

void OpenRegGraph::enable_debug_mode() { debug_ = true; }

void OpenRegGraph::debug_dump(const std::string& path) {
  TORCH_CHECK(debug_,
              "debug_dump: call enable_debug_mode() on this graph first");
  TORCH_CHECK(graph_ != nullptr,
              "debug_dump: this graph holds no capture to dump");
  std::ofstream out(path);
  out << graph_->DebugString();
  TORCH_CHECK(out.good(), "debug_dump: could not write ", path);
}

bool IsCurrentStreamCapturing() {
  const c10::DeviceIndex device =
      static_cast<c10::DeviceIndex>(CurrentDeviceIndex());
  return IsCapturing(CurrentDriverStream(device));
}

}  // namespace openreg

namespace at {
// Keyed by c10::DeviceTypeName(PrivateUse1) once the backend is renamed.
REGISTER_GRAPH_IMPL(OPENREG, openreg::OpenRegGraph);
}  // namespace at
