// Google Benchmark of the driver calls every op pays, on each shipped driver:
//
//   bazel run //bench:driver_benchmark
//
// host-function launch (the round trip to a finished no-op, the launch
// alone, amortized over a batch, and the launch between stretches of host
// work), event record + query, and synchronizing an idle stream. Absolute
// figures: there is no CPU-eager equivalent. The
// "_faults_armed" rows load the driver with every fault point armed at rate
// 0 (docs/fault_injection.md): beside the plain rows, the cost of counting
// calls that never fail.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "bench/shipped_driver.h"
#include "core/driver/driver.h"

namespace openreg {
namespace {

struct Loaded {
  std::unique_ptr<Driver> driver;
  // Declared after the driver, so they die first.
  DriverStream stream;
  DriverEvent event;
};

// Every fault point armed, none failing.
constexpr char kFaultsArmed[] =
    "fault_points=device_malloc+host_malloc+memcpy_async+memset_async+"
    "launch_host_func+event_record,fault_rate=0";

// One driver, stream and event per driver (a name, "_faults_armed" for the
// armed variant), for the life of the process.
Loaded& Load(const std::string& name) {
  static auto* loaded = new std::map<std::string, Loaded>();
  auto it = loaded->find(name);
  if (it != loaded->end()) return it->second;
  Loaded entry;
  const size_t armed = name.find("_faults_armed");
  entry.driver = armed == std::string::npos
                     ? LoadShippedDriver(name)
                     : LoadShippedDriver(name.substr(0, armed), kFaultsArmed);
  entry.stream = entry.driver->CreateStream(0, 0).value();
  entry.event = entry.driver->CreateEvent(0).value();
  return loaded->emplace(name, std::move(entry)).first->second;
}

openreg_status NoOp(void*) { return OPENREG_SUCCESS; }

void HostFuncRoundTrip(benchmark::State& state, const std::string& name) {
  Loaded& d = Load(name);
  for (auto _ : state) {
    if (!d.driver->LaunchHostFunc(d.stream.get(), &NoOp, nullptr).ok() ||
        !d.driver->StreamSynchronize(d.stream.get()).ok()) {
      state.SkipWithError("launch failed");
    }
  }
}

void HostFuncLaunch(benchmark::State& state, const std::string& name) {
  Loaded& d = Load(name);
  int64_t launched = 0;
  for (auto _ : state) {
    if (!d.driver->LaunchHostFunc(d.stream.get(), &NoOp, nullptr).ok()) {
      state.SkipWithError("launch failed");
    }
    // Bounded queues: drain now and then, off the clock.
    if (++launched % 1024 == 0) {
      state.PauseTiming();
      d.driver->StreamSynchronize(d.stream.get()).IgnoreError();
      state.ResumeTiming();
    }
  }
  d.driver->StreamSynchronize(d.stream.get()).IgnoreError();
}

// About a microsecond of work on the calling thread's own data, as Python's
// interpreter does between two ops.
void HostWork() {
  static thread_local std::array<uint64_t, 2048> data{};
  uint64_t sum = 0;
  for (uint64_t& x : data) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    sum += x >> 7;
  }
  benchmark::DoNotOptimize(sum);
}

void HostWorkAlone(benchmark::State& state) {
  for (auto _ : state) HostWork();
}

// A launch per stretch of host work: as in a Python loop of tiny ops, an
// asynchronous driver's worker has finished each item and is waiting for the
// next when it comes, so the launch pays for every cache line the two
// threads both write (Note [A queue the worker pops without a lock] in
// plugins/threaded_sim/work_queue.h). Beside HostWorkAlone, the difference is
// what a launch costs the launching thread.
void HostFuncLaunchAmidHostWork(benchmark::State& state,
                                const std::string& name) {
  Loaded& d = Load(name);
  for (auto _ : state) {
    HostWork();
    if (!d.driver->LaunchHostFunc(d.stream.get(), &NoOp, nullptr).ok()) {
      state.SkipWithError("launch failed");
    }
  }
  d.driver->StreamSynchronize(d.stream.get()).IgnoreError();
}

void EventRecordQuery(benchmark::State& state, const std::string& name) {
  Loaded& d = Load(name);
  for (auto _ : state) {
    d.driver->EventRecord(d.event.get(), d.stream.get()).IgnoreError();
    benchmark::DoNotOptimize(d.driver->EventQuery(d.event.get()));
  }
  d.driver->StreamSynchronize(d.stream.get()).IgnoreError();
}

void StreamSynchronizeIdle(benchmark::State& state, const std::string& name) {
  Loaded& d = Load(name);
  for (auto _ : state) {
    benchmark::DoNotOptimize(d.driver->StreamSynchronize(d.stream.get()));
  }
}

BENCHMARK_CAPTURE(HostFuncRoundTrip, cpu_sim, "cpu_sim");
BENCHMARK_CAPTURE(HostFuncRoundTrip, cpu_sim_faults_armed,
                  "cpu_sim_faults_armed");
BENCHMARK_CAPTURE(HostFuncRoundTrip, threaded_sim, "threaded_sim");
BENCHMARK_CAPTURE(HostFuncRoundTrip, threaded_sim_faults_armed,
                  "threaded_sim_faults_armed");
BENCHMARK_CAPTURE(HostFuncLaunch, cpu_sim, "cpu_sim");
BENCHMARK_CAPTURE(HostFuncLaunch, cpu_sim_faults_armed, "cpu_sim_faults_armed");
BENCHMARK_CAPTURE(HostFuncLaunch, threaded_sim, "threaded_sim");
BENCHMARK_CAPTURE(HostFuncLaunch, threaded_sim_faults_armed,
                  "threaded_sim_faults_armed");
BENCHMARK(HostWorkAlone);
BENCHMARK_CAPTURE(HostFuncLaunchAmidHostWork, cpu_sim, "cpu_sim");
BENCHMARK_CAPTURE(HostFuncLaunchAmidHostWork, threaded_sim, "threaded_sim");
BENCHMARK_CAPTURE(EventRecordQuery, cpu_sim, "cpu_sim");
BENCHMARK_CAPTURE(EventRecordQuery, cpu_sim_faults_armed,
                  "cpu_sim_faults_armed");
BENCHMARK_CAPTURE(EventRecordQuery, threaded_sim, "threaded_sim");
BENCHMARK_CAPTURE(EventRecordQuery, threaded_sim_faults_armed,
                  "threaded_sim_faults_armed");
BENCHMARK_CAPTURE(StreamSynchronizeIdle, cpu_sim, "cpu_sim");
BENCHMARK_CAPTURE(StreamSynchronizeIdle, cpu_sim_faults_armed,
                  "cpu_sim_faults_armed");
BENCHMARK_CAPTURE(StreamSynchronizeIdle, threaded_sim, "threaded_sim");
BENCHMARK_CAPTURE(StreamSynchronizeIdle, threaded_sim_faults_armed,
                  "threaded_sim_faults_armed");

}  // namespace
}  // namespace openreg

int main(int argc, char** argv) {
  // As openreg's runtime does in release builds (core/runtime/runtime.cc).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
