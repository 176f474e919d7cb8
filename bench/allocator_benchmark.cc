// Google Benchmark of the device caching allocator, beside malloc/free of the
// same sizes measured in the same run:
//
//   bazel run //bench:allocator_benchmark
//
// A cache hit is an Allocate/Free pair the cache serves; a miss also empties
// the cache every time, so each pair reaches the driver. The last lines
// print each figure's ratio to malloc/free (the machine is shared and noisy:
// only ratios from one run mean anything). docs/performance.md records them.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "bench/shipped_driver.h"
#include "core/runtime/memory/caching_device_allocator.h"

namespace openreg {
namespace {

constexpr int64_t kSmall = 4 << 10;  // small pool
constexpr int64_t kLarge = 4 << 20;  // large pool

void NoReclaim() {}

using Allocators =
    std::map<std::string, std::pair<std::unique_ptr<Driver>,
                                    std::unique_ptr<CachingDeviceAllocator>>>;

// One loaded driver and allocator per driver, for the life of the process.
Allocators& LoadedAllocators() {
  static auto* allocators = new Allocators();
  return *allocators;
}

CachingDeviceAllocator& AllocatorFor(const std::string& driver_name) {
  Allocators* allocators = &LoadedAllocators();
  auto it = allocators->find(driver_name);
  if (it == allocators->end()) {
    std::unique_ptr<Driver> driver = LoadShippedDriver(driver_name);
    auto allocator = std::make_unique<CachingDeviceAllocator>(
        *driver, 1, AllocatorConfig());
    it = allocators
             ->emplace(driver_name,
                       std::make_pair(std::move(driver), std::move(allocator)))
             .first;
  }
  return *it->second.second;
}

void BM_MallocFree(benchmark::State& state) {
  const size_t size = state.range(0);
  for (auto _ : state) {
    void* ptr = std::malloc(size);
    benchmark::DoNotOptimize(ptr);
    std::free(ptr);
  }
}

void CacheHit(benchmark::State& state, const std::string& driver) {
  CachingDeviceAllocator& allocator = AllocatorFor(driver);
  const size_t size = state.range(0);
  allocator.Free(allocator.Allocate(0, size, NoReclaim).value());  // warm
  for (auto _ : state) {
    Block* block = allocator.Allocate(0, size, NoReclaim).value();
    benchmark::DoNotOptimize(block);
    allocator.Free(block);
  }
}

void CacheMiss(benchmark::State& state, const std::string& driver) {
  CachingDeviceAllocator& allocator = AllocatorFor(driver);
  const size_t size = state.range(0);
  for (auto _ : state) {
    Block* block = allocator.Allocate(0, size, NoReclaim).value();
    benchmark::DoNotOptimize(block);
    allocator.Free(block);
    if (!allocator.pool(0).EmptyCache().ok()) state.SkipWithError("empty cache");
  }
}

BENCHMARK(BM_MallocFree)->Arg(kSmall)->Arg(kLarge);
BENCHMARK_CAPTURE(CacheHit, cpu_sim, "cpu_sim")->Arg(kSmall)->Arg(kLarge);
BENCHMARK_CAPTURE(CacheHit, threaded_sim, "threaded_sim")->Arg(kSmall)->Arg(kLarge);
BENCHMARK_CAPTURE(CacheMiss, cpu_sim, "cpu_sim")->Arg(kSmall)->Arg(kLarge);
BENCHMARK_CAPTURE(CacheMiss, threaded_sim, "threaded_sim")->Arg(kSmall)->Arg(kLarge);

// Prints as usual, then each result's ratio to malloc/free of its size.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Iteration) {
        results_.emplace_back(run.benchmark_name(), run.GetAdjustedRealTime());
      }
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::map<std::string, double> malloc_by_size;
    for (const auto& [name, time] : results_) {
      if (name.rfind("BM_MallocFree/", 0) == 0) {
        malloc_by_size[name.substr(name.find('/'))] = time;
      }
    }
    std::printf("\nratio to malloc/free of the same size (same run):\n");
    for (const auto& [name, time] : results_) {
      auto reference = malloc_by_size.find(name.substr(name.rfind('/')));
      if (reference == malloc_by_size.end() || reference->second <= 0) continue;
      std::printf("  %-40s %8.1f ns  %6.2fx\n", name.c_str(), time,
                  time / reference->second);
    }
  }

 private:
  std::vector<std::pair<std::string, double>> results_;
};

// Whether every block the benchmarks allocated was freed: a benchmark that
// loses its blocks measures a growing pool, and runs out of device memory in
// a long run (the test runs it briefly: tests/bench).
bool AllBlocksFreed() {
  bool freed = true;
  for (const auto& [name, loaded] : LoadedAllocators()) {
    const int64_t allocated = loaded.second->pool(0)
                                  .stats()
                                  .allocated_bytes[StatPool::kAll]
                                  .current;
    if (allocated != 0) {
      std::fprintf(stderr,
                   "allocator_benchmark: %lld bytes still allocated on %s "
                   "after the benchmarks; each benchmark must free every "
                   "block it allocates\n",
                   static_cast<long long>(allocated), name.c_str());
      freed = false;
    }
  }
  return freed;
}

}  // namespace
}  // namespace openreg

int main(int argc, char** argv) {
  // As openreg's runtime does in release builds (core/runtime/runtime.cc).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  benchmark::Initialize(&argc, argv);
  openreg::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return openreg::AllBlocksFreed() ? 0 : 1;
}
