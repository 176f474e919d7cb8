// How far apart the machine's first two CPUs are: the round-trip time of one
// cache line between a thread pinned to CPU 0 and one pinned to CPU 1.
//
//   bazel run //bench:core_to_core_latency [-- round_trips]
//
// Prints the nanoseconds per round trip. On the shared 2-vCPU VM the
// hypervisor moves the two vCPUs between places on the host for minutes at a
// time: ~60 ns when they share a cache, ~350 ns when they do not. Work whose
// OpenMP threads pass data to each other (graph replays of small kernels)
// then runs 2x slower while a single-threaded loop barely moves, so
// bench:all probes this around every measurement (docs/performance.md,
// "Where the vCPUs are").
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

// 0 on success, else the error number.
int PinCallingThreadTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// The value the two threads hand back and forth, alone in its cache line.
struct alignas(64) Line {
  std::atomic<int> turn{0};
};

}  // namespace

int main(int argc, char** argv) {
  const long round_trips = argc > 1 ? std::atol(argv[1]) : 20000;
  if (round_trips <= 0) {
    std::fprintf(stderr,
                 "core_to_core_latency: round_trips must be a positive "
                 "integer, got \"%s\"\n",
                 argv[1]);
    return 2;
  }
  if (const int error = PinCallingThreadTo(0); error != 0) {
    std::fprintf(stderr, "core_to_core_latency: cannot run on CPU 0: %s\n",
                 std::strerror(error));
    return 1;
  }
  // The responder's pinning result, then whether to go on: -1 until known.
  std::atomic<int> responder_error{-1};
  std::atomic<bool> go{false};
  Line line;
  std::thread responder([&] {
    responder_error.store(PinCallingThreadTo(1));
    while (!go.load()) {
    }
    if (responder_error.load() != 0) return;
    for (long i = 0; i < round_trips; ++i) {
      while (line.turn.load(std::memory_order_acquire) != 1) {
      }
      line.turn.store(0, std::memory_order_release);
    }
  });
  while (responder_error.load() < 0) {
  }
  go.store(true);
  const int error = responder_error.load();
  if (error != 0) {
    responder.join();
    std::fprintf(stderr,
                 "core_to_core_latency: cannot run on CPU 1 (the probe needs "
                 "two CPUs): %s\n",
                 std::strerror(error));
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < round_trips; ++i) {
    line.turn.store(1, std::memory_order_release);
    while (line.turn.load(std::memory_order_acquire) != 0) {
    }
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  responder.join();
  std::printf(
      "%.1f\n",
      std::chrono::duration<double, std::nano>(elapsed).count() / round_trips);
  return 0;
}
