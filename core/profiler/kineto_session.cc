#include "core/profiler/kineto_session.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "c10/util/Exception.h"
#include "core/profiler/missing_activity_warning.h"

namespace openreg::profiler {

using libkineto::ActivityType;
using libkineto::GenericTraceActivity;

namespace {

// The correlation ids Kineto pushed on this thread: operations nest, and
// when an inner one ends the outer one's id applies again.
thread_local std::vector<uint64_t> t_correlation_ids;

// What torch.profiler's ProfilerActivity.PrivateUse1 asks for that this
// profiler provides.
const std::set<ActivityType>& DeviceActivityTypes() {
  static const std::set<ActivityType> types = {
      ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,
      ActivityType::GPU_MEMSET, ActivityType::CUDA_SYNC,
      ActivityType::PRIVATEUSE1_RUNTIME};
  return types;
}

// Kineto's activity type for a record kind: the types torch maps to the
// PrivateUse1 device, so that device time lands in key_averages().
ActivityType TypeOf(int32_t kind) {
  switch (kind) {
    case OPENREG_ACTIVITY_MEMCPY:
      return ActivityType::GPU_MEMCPY;
    case OPENREG_ACTIVITY_MEMSET:
      return ActivityType::GPU_MEMSET;
    case OPENREG_ACTIVITY_EVENT_RECORD:
    case OPENREG_ACTIVITY_EVENT_WAIT:
      return ActivityType::CUDA_SYNC;
    default:
      return ActivityType::CONCURRENT_KERNEL;
  }
}

std::string CopyName(int32_t memcpy_kind) {
  switch (memcpy_kind) {
    case OPENREG_MEMCPY_HOST_TO_DEVICE:
      return "Memcpy HtoD (openreg)";
    case OPENREG_MEMCPY_DEVICE_TO_HOST:
      return "Memcpy DtoH (openreg)";
    case OPENREG_MEMCPY_DEVICE_TO_DEVICE:
      return "Memcpy DtoD (openreg)";
    default:
      return "Memcpy HtoH (openreg)";
  }
}

// A host function is named after the operation that launched it, as a
// kernel is named after its function; without one it is anonymous.
std::string NameOf(const DeviceActivity& activity,
                   const libkineto::ITraceActivity* launcher) {
  switch (activity.kind) {
    case OPENREG_ACTIVITY_MEMCPY:
      return CopyName(activity.memcpy_kind);
    case OPENREG_ACTIVITY_MEMSET:
      return "Memset (openreg)";
    case OPENREG_ACTIVITY_EVENT_RECORD:
      return "Event record (openreg)";
    case OPENREG_ACTIVITY_EVENT_WAIT:
      return "Stream wait event (openreg)";
    default:
      return launcher != nullptr ? launcher->name() : "host function (openreg)";
  }
}

}  // namespace

OpenregProfilerSession::OpenregProfilerSession(Runtime* runtime)
    : runtime_(runtime) {}

void OpenregProfilerSession::start() {
  if (runtime_ == nullptr) return;
  collector_.emplace(runtime_->driver());
  if (absl::Status s = collector_->Start(); !s.ok()) {
    errors_.push_back(std::string(s.message()));
    collector_.reset();
    return;
  }
  status_ = libkineto::TraceStatus::RECORDING;
}

void OpenregProfilerSession::stop() {
  if (!collector_.has_value()) return;
  if (absl::Status s = collector_->Stop(); !s.ok()) {
    errors_.push_back(std::string(s.message()));
  }
  activities_ = collector_->Take();
  status_ = libkineto::TraceStatus::PROCESSING;
}

void OpenregProfilerSession::pushCorrelationId(uint64_t id) {
  if (runtime_ == nullptr) return;
  t_correlation_ids.push_back(id);
  // A failure would only lose the arrow to this operation's work; there is
  // no caller to report it to from inside an operator's start.
  runtime_->driver().SetActivityCorrelationId(id).IgnoreError();
}

void OpenregProfilerSession::popCorrelationId() {
  if (runtime_ == nullptr || t_correlation_ids.empty()) return;
  t_correlation_ids.pop_back();
  runtime_->driver()
      .SetActivityCorrelationId(
          t_correlation_ids.empty() ? 0 : t_correlation_ids.back())
      .IgnoreError();
}

int64_t OpenregProfilerSession::StreamId(int32_t device,
                                         openreg_stream stream) const {
  return runtime_->streams().IdOf(device, stream).value_or(-1);
}

void OpenregProfilerSession::BuildActivities(
    const libkineto::getLinkedActivityCallback& get_linked_activity) {
  trace_buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
  trace_buffer_->span = libkineto::TraceSpan(0, 0, "openreg");
  trace_buffer_->gpuOpCount = 0;
  // One launch marker per correlated operation: the start of the arrow.
  std::set<uint64_t> launches;
  for (const DeviceActivity& activity : activities_) {
    // Kineto's correlation ids are 32-bit in its activities.
    const int32_t correlation = static_cast<int32_t>(activity.correlation_id);
    const libkineto::ITraceActivity* launcher =
        activity.correlation_id != 0 && get_linked_activity
            ? get_linked_activity(correlation)
            : nullptr;
    const int64_t stream_id = StreamId(activity.device, activity.stream);
    streams_seen_.emplace(activity.device, stream_id);
    auto item = std::make_unique<GenericTraceActivity>(
        trace_buffer_->span, TypeOf(activity.kind), NameOf(activity, launcher));
    item->startTime = activity.start_ns;
    item->endTime = activity.end_ns;
    item->id = correlation;
    item->device = activity.device;
    item->resource = static_cast<int32_t>(stream_id);
    item->linked = launcher;
    item->addMetadata("device", activity.device);
    item->addMetadata("stream", stream_id);
    item->addMetadata("correlation", activity.correlation_id);
    if (activity.kind == OPENREG_ACTIVITY_MEMCPY ||
        activity.kind == OPENREG_ACTIVITY_MEMSET) {
      item->addMetadata("bytes", activity.bytes);
    }
    if (launcher != nullptr) {
      item->flow.id = static_cast<uint32_t>(correlation);
      item->flow.type = libkineto::kLinkAsyncCpuGpu;
      item->flow.start = 0;
      if (launches.insert(activity.correlation_id).second) {
        // On the launching operation's thread, at its start: the CPU side
        // of the arrow, inside the operation's slice.
        auto launch = std::make_unique<GenericTraceActivity>(
            trace_buffer_->span, ActivityType::PRIVATEUSE1_RUNTIME,
            "openreg launch");
        launch->startTime = launcher->timestamp();
        launch->endTime = launcher->timestamp() +
                          std::min<int64_t>(launcher->duration(), 1000);
        launch->id = correlation;
        launch->device = static_cast<int32_t>(launcher->deviceId());
        launch->resource = static_cast<int32_t>(launcher->resourceId());
        launch->threadId = launcher->getThreadId();
        launch->linked = launcher;
        launch->flow.id = static_cast<uint32_t>(correlation);
        launch->flow.type = libkineto::kLinkAsyncCpuGpu;
        launch->flow.start = 1;
        trace_buffer_->activities.push_back(std::move(launch));
      }
    }
    ++trace_buffer_->gpuOpCount;
    trace_buffer_->activities.push_back(std::move(item));
  }
}

void OpenregProfilerSession::processTrace(libkineto::ActivityLogger& logger) {
  processTrace(logger, nullptr, 0, 0);
}

void OpenregProfilerSession::processTrace(
    libkineto::ActivityLogger& logger,
    libkineto::getLinkedActivityCallback get_linked_activity,
    int64_t /*start_time*/, int64_t /*end_time*/) {
  if (runtime_ == nullptr) return;
  BuildActivities(get_linked_activity);
  for (const std::unique_ptr<GenericTraceActivity>& activity :
       trace_buffer_->activities) {
    activity->log(logger);
  }
  status_ = libkineto::TraceStatus::READY;
}

std::unique_ptr<libkineto::DeviceInfo> OpenregProfilerSession::getDeviceInfo() {
  if (runtime_ == nullptr) return nullptr;
  // Kineto takes one process per session: the first device's row names
  // the openreg process; every device's streams are its threads' rows.
  return std::make_unique<libkineto::DeviceInfo>(
      libkineto::DeviceInfo{0, 0, "openreg 0", "openreg"});
}

std::vector<libkineto::ResourceInfo>
OpenregProfilerSession::getResourceInfos() {
  std::vector<libkineto::ResourceInfo> resources;
  for (const auto& [device, stream_id] : streams_seen_) {
    resources.push_back(libkineto::ResourceInfo{
        stream_id, stream_id, device,
        absl::StrCat("openreg stream ", stream_id,
                     stream_id == kDefaultStreamId ? " (default)" : "")});
  }
  return resources;
}

std::unique_ptr<libkineto::CpuTraceBuffer>
OpenregProfilerSession::getTraceBuffer() {
  return std::move(trace_buffer_);
}

const std::string& OpenregActivityProfiler::name() const {
  static const std::string name = "openreg";
  return name;
}

const std::set<ActivityType>& OpenregActivityProfiler::availableActivities()
    const {
  return DeviceActivityTypes();
}

std::unique_ptr<libkineto::IActivityProfilerSession>
OpenregActivityProfiler::configure(const std::set<ActivityType>& activity_types,
                                   const libkineto::Config& /*config*/) {
  const bool wants_device =
      activity_types.count(ActivityType::CONCURRENT_KERNEL) > 0 ||
      activity_types.count(ActivityType::GPU_MEMCPY) > 0;
  if (!wants_device) return std::make_unique<OpenregProfilerSession>(nullptr);
  absl::StatusOr<Runtime*> runtime = Runtime::Get();
  if (!runtime.ok()) {
    TORCH_WARN("openreg: device activity is not recorded: ",
               runtime.status().message());
    return std::make_unique<OpenregProfilerSession>(nullptr);
  }
  if (!(*runtime)->driver().has_activity_recording()) {
    MissingActivityWarning().Warn(absl::StrCat(
        "openreg: profiling shows CPU-side events only: ",
        (*runtime)->driver().ActivityRecordingUnavailable().message()));
    return std::make_unique<OpenregProfilerSession>(nullptr);
  }
  return std::make_unique<OpenregProfilerSession>(*runtime);
}

std::unique_ptr<libkineto::IActivityProfilerSession>
OpenregActivityProfiler::configure(int64_t /*ts_ms*/, int64_t /*duration_ms*/,
                                   const std::set<ActivityType>& activity_types,
                                   const libkineto::Config& config) {
  return configure(activity_types, config);
}

}  // namespace openreg::profiler
