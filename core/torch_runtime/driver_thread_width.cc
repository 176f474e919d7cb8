#include "core/torch_runtime/driver_thread_width.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <algorithm>

#include "core/torch_runtime/piece_cpu_timer.h"
#include "third_party/openmp/thread_workers.h"

namespace openreg {
namespace {

// A piece of work whose thread time (duration times width) reaches this is
// long: a parallel region's start and end (~10-30 us each) are small beside
// it, and the host loses little by waiting for a core. Element-wise ops on
// the bench models' activations take 5-100 us of thread time; their matmuls
// and convolutions take 0.3-20 ms.
constexpr int64_t kLongWorkThreadNs = 250'000;
// Decisions are taken over this much busy time of one driver thread: long
// enough to average a model's mix of ops, short enough to follow a change of
// phase (forward to optimizer step) within a step.
constexpr int64_t kWindowBusyNs = 2'000'000;
// Hysteresis on the share of the window's busy time spent in long work: wide
// above the first in this many windows in a row, narrow below the second in
// one, unchanged otherwise.
constexpr double kWidenAbove = 0.5;
constexpr int kWidenAfterWindows = 2;
constexpr double kNarrowBelow = 0.25;
// A piece's CPU time is over-counted by less than this share of a long
// piece's duration (Note [Timing driver work without a system call per
// piece]).
constexpr int64_t kCpuOvercountDivisor = 16;

// Whether the calling host thread's launches leave work to driver threads.
thread_local bool work_queued_for_driver_threads = false;

// The calling driver thread's recent work.
struct DriverThreadState {
  bool wide = false;
  // The team size of the thread's last piece of work, 0 before the first.
  int last_width = 0;
  int64_t window_busy_ns = 0;
  int64_t window_long_ns = 0;
  // Windows in a row whose long share was above kWidenAbove.
  int long_windows = 0;
  PieceCpuTimer timer;
};
thread_local DriverThreadState driver_thread;

}  // namespace

void NoteWorkQueuedForDriverThread() { work_queued_for_driver_threads = true; }

void ReleaseHostWorkersBeforeWaiting() {
  // Cheap when the thread owns no pool, which is the usual case: a host
  // thread whose kernels run elsewhere starts one only for CPU work of its
  // own.
  if (work_queued_for_driver_threads) openmp::ReleaseCallingThreadWorkers();
}

DriverThreadWorkScope::DriverThreadWorkScope()
    : full_width_(at::get_num_threads()) {
  DriverThreadState& state = driver_thread;
  // Not widened while a host thread waits (Note [OpenMP width of driver
  // threads]): that would start a new OpenMP worker as the host leaves its
  // core.
  const bool full =
      state.wide || at::globalContext().deterministicAlgorithms();
  width_ = full ? full_width_ : std::max(1, full_width_ - 1);
  if (width_ != full_width_) {
    openmp::SetCallingThreadTeamSize(width_);
    // Workers beyond the new width would idle in the pool, still counted
    // against the cores.
    if (state.last_width > width_) openmp::ReleaseCallingThreadWorkers();
  }
  state.last_width = width_;
  // A piece at this width is long from this duration on (its thread time,
  // duration times width, reaches kLongWorkThreadNs).
  long_piece_ns_ = (kLongWorkThreadNs + width_ - 1) / width_;
  state.timer.Start(long_piece_ns_ / kCpuOvercountDivisor);
}

DriverThreadWorkScope::~DriverThreadWorkScope() {
  DriverThreadState& state = driver_thread;
  // The piece's CPU time, exact enough only where it decides whether the
  // piece is long: a piece shorter than that reports its wall time.
  const int64_t elapsed_ns = state.timer.Stop(long_piece_ns_);
  // Restored after every narrowed piece: MKL and at::init_num_threads read
  // the thread's OpenMP setting back as ATen's count, and would keep the
  // narrow one for good.
  if (width_ != full_width_) openmp::SetCallingThreadTeamSize(full_width_);
  state.window_busy_ns += elapsed_ns;
  if (elapsed_ns >= long_piece_ns_) state.window_long_ns += elapsed_ns;
  if (state.window_busy_ns < kWindowBusyNs) return;
  const double long_share = static_cast<double>(state.window_long_ns) /
                            static_cast<double>(state.window_busy_ns);
  state.long_windows = long_share > kWidenAbove ? state.long_windows + 1 : 0;
  if (state.long_windows >= kWidenAfterWindows) {
    state.wide = true;
  } else if (long_share < kNarrowBelow) {
    state.wide = false;
  }
  state.window_busy_ns = 0;
  state.window_long_ns = 0;
}

}  // namespace openreg
