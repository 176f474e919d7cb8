#include "core/profiler/legacy_stubs.h"

#include <c10/util/ApproximateClock.h>

#include <memory>
#include <utility>

#include "core/runtime/runtime.h"
#include "core/runtime/thread_state.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg::profiler {

namespace {

Runtime& TheRuntime() { return *ValueOrThrow(Runtime::Get()); }

// The driver event behind a stub made by record().
openreg_event EventOf(
    const torch::profiler::impl::ProfilerVoidEventStub* stub) {
  return static_cast<const DriverEvent*>(stub->get())->get();
}

}  // namespace

void LegacyProfilerStubs::record(
    c10::DeviceIndex* device,
    torch::profiler::impl::ProfilerVoidEventStub* event,
    int64_t* cpu_ns) const {
  Runtime& runtime = TheRuntime();
  const int32_t index = CurrentDeviceIndex();
  if (device != nullptr) *device = static_cast<c10::DeviceIndex>(index);
  auto timed = std::make_shared<DriverEvent>(ValueOrThrow(
      runtime.driver().CreateEvent(index, EventFlags::kEnableTiming)));
  // The CPU time is taken right before the record, as CUDA's stubs do, so
  // the profiler can align the two clocks.
  // The event times the work enqueued so far, gathered loops included
  // (Note [One launch per foreach call]).
  LaunchGatheredWork();
  if (cpu_ns != nullptr) *cpu_ns = c10::getTime();
  ThrowIfError(runtime.driver().EventRecord(
      timed->get(), CurrentDriverStream(static_cast<c10::DeviceIndex>(index))));
  *event = std::move(timed);
}

float LegacyProfilerStubs::elapsed(
    const torch::profiler::impl::ProfilerVoidEventStub* start,
    const torch::profiler::impl::ProfilerVoidEventStub* end) const {
  const Driver& driver = TheRuntime().driver();
  ThrowIfError(driver.EventSynchronize(EventOf(start)));
  ThrowIfError(driver.EventSynchronize(EventOf(end)));
  return ValueOrThrow(
             driver.EventElapsedMilliseconds(EventOf(start), EventOf(end))) *
         1000.0f;
}

void LegacyProfilerStubs::onEachDevice(std::function<void(int)> op) const {
  const int32_t previous = CurrentDeviceIndex();
  for (int32_t device = 0; device < TheRuntime().device_count(); ++device) {
    SetCurrentDeviceIndex(device);
    op(device);
  }
  SetCurrentDeviceIndex(previous);
}

void LegacyProfilerStubs::synchronize() const {
  LaunchGatheredWork();  // Note [One launch per foreach call]
  Runtime& runtime = TheRuntime();
  for (int32_t device = 0; device < runtime.device_count(); ++device) {
    ThrowIfError(runtime.driver().DeviceSynchronize(device));
  }
}

}  // namespace openreg::profiler
