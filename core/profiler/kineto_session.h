// openreg's Kineto activity profiler: what makes torch.profiler show the
// device work of openreg streams (docs/profiling.md).
//
// Kineto asks every registered IActivityProfiler for a session when a trace
// is prepared, starts and stops it with the trace, and then has it log its
// activities. Like Kineto's CUPTI profiler, the session correlates device
// work with the CPU operation that launched it through an external
// correlation id: Kineto pushes the id of every CPU operation as it starts,
// on the thread running it; the session hands it to the driver
// (activity_set_correlation_id), which stamps every item that thread
// enqueues; at the end the id finds the operation (getLinkedActivity), so
// that torch attributes the item's device time to it and the trace draws an
// arrow from it to the item.
//
// Ownership: the session owns its collector and, until Kineto takes it with
// getTraceBuffer(), the activities it logged; Kineto then keeps them alive
// for the life of the trace, as its loggers hold pointers to them.
// Thread-safety: Kineto calls configure/start/stop/processTrace from one
// thread at a time; push/popCorrelationId come from any thread running an
// operation and touch only that thread's stack and the driver.
#ifndef OPENREG_CORE_PROFILER_KINETO_SESSION_H_
#define OPENREG_CORE_PROFILER_KINETO_SESSION_H_

#include <IActivityProfiler.h>
#include <libkineto.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/profiler/activity_collector.h"
#include "core/runtime/runtime.h"

namespace openreg::profiler {

class OpenregProfilerSession final
    : public libkineto::IActivityProfilerSession {
 public:
  // `runtime` is null when device activity was not asked for, or the driver
  // cannot record it; the session then records nothing.
  explicit OpenregProfilerSession(Runtime* runtime);

  void start() override;
  void stop() override;
  std::vector<std::string> errors() override { return errors_; }
  void processTrace(libkineto::ActivityLogger& logger) override;
  void processTrace(libkineto::ActivityLogger& logger,
                    libkineto::getLinkedActivityCallback get_linked_activity,
                    int64_t start_time, int64_t end_time) override;
  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override;
  std::vector<libkineto::ResourceInfo> getResourceInfos() override;
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override;
  void pushCorrelationId(uint64_t id) override;
  void popCorrelationId() override;

 private:
  // Turns the collected records into trace activities in trace_buffer_.
  void BuildActivities(
      const libkineto::getLinkedActivityCallback& get_linked_activity);
  // The torch stream id of `stream` on `device`, or -1.
  int64_t StreamId(int32_t device, openreg_stream stream) const;

  Runtime* const runtime_;
  std::optional<ActivityCollector> collector_;
  std::vector<DeviceActivity> activities_;
  std::vector<std::string> errors_;
  // Built by processTrace; handed to Kineto by getTraceBuffer().
  std::unique_ptr<libkineto::CpuTraceBuffer> trace_buffer_;
  // (device, stream id) of every stream that ran something.
  std::set<std::pair<int32_t, int64_t>> streams_seen_;
};

class OpenregActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override;
  const std::set<libkineto::ActivityType>& availableActivities() const override;
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<libkineto::ActivityType>& activity_types,
      const libkineto::Config& config) override;
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t ts_ms, int64_t duration_ms,
      const std::set<libkineto::ActivityType>& activity_types,
      const libkineto::Config& config) override;
};

}  // namespace openreg::profiler

#endif  // OPENREG_CORE_PROFILER_KINETO_SESSION_H_
