#include "core/torch_runtime/piece_cpu_timer.h"

#include <time.h>

#include <algorithm>

namespace openreg {
namespace {

int64_t Read(clockid_t clock) {
  timespec now;
  clock_gettime(clock, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

int64_t PieceCpuTimer::MonotonicNs() { return Read(CLOCK_MONOTONIC); }

int64_t PieceCpuTimer::ThreadCpuNs() { return Read(CLOCK_THREAD_CPUTIME_ID); }

void PieceCpuTimer::ReadCpuClock(int64_t wall_ns) {
  reading_cpu_ns_ = thread_cpu_();
  reading_wall_ns_ = wall_ns;
  has_reading_ = true;
}

void PieceCpuTimer::Start(int64_t max_overcount_ns) {
  start_wall_ns_ = wall_();
  if (!has_reading_ || start_wall_ns_ - reading_wall_ns_ >= max_overcount_ns) {
    ReadCpuClock(start_wall_ns_);
  }
}

int64_t PieceCpuTimer::Stop(int64_t decisive_ns) {
  const int64_t end_wall_ns = wall_();
  const int64_t wall_ns = end_wall_ns - start_wall_ns_;
  if (wall_ns < decisive_ns) return wall_ns;
  const int64_t previous_cpu_ns = reading_cpu_ns_;
  ReadCpuClock(end_wall_ns);
  return std::min(wall_ns, reading_cpu_ns_ - previous_cpu_ns);
}

}  // namespace openreg
