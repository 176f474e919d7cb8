#include "core/torch_runtime/driver_thread_width.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>

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

// Host threads in a HostWaitScope now, of those whose work runs on driver
// threads. Read by driver threads at the end of every replayed kernel.
std::atomic<int> host_threads_waiting{0};

// A history of pieces over windows of busy time, deciding between two widths
// with hysteresis: wide once the share of the windows' time that `counts` as
// wide passes kWidenAbove in kWidenAfterWindows windows in a row, narrow once
// it falls below kNarrowBelow in one.
struct WidthHistory {
  bool wide = false;
  int64_t window_busy_ns = 0;
  int64_t window_wide_ns = 0;
  // Windows in a row whose share was above kWidenAbove.
  int wide_windows = 0;

  void Add(int64_t elapsed_ns, bool counts_as_wide) {
    window_busy_ns += elapsed_ns;
    if (counts_as_wide) window_wide_ns += elapsed_ns;
    if (window_busy_ns < kWindowBusyNs) return;
    const double share = static_cast<double>(window_wide_ns) /
                         static_cast<double>(window_busy_ns);
    wide_windows = share > kWidenAbove
                       ? std::min(wide_windows + 1, kWidenAfterWindows)
                       : 0;
    if (wide_windows >= kWidenAfterWindows) {
      wide = true;
    } else if (share < kNarrowBelow) {
      wide = false;
    }
    window_busy_ns = 0;
    window_wide_ns = 0;
  }
};

// The calling driver thread's recent work.
struct DriverThreadState {
  // Over every piece and replayed kernel: whether long ones dominate.
  WidthHistory by_length;
  // Over replayed kernels: whether a host thread mostly waited meanwhile.
  WidthHistory replays_by_host_waiting;
  // The widest team size since the thread last gave its OpenMP workers
  // back: the workers its pool may hold.
  int widest_since_release = 0;
  // The team size in effect: ATen's count outside pieces, 0 before the
  // first. A replayed kernel may differ from the piece around it.
  int team_size = 0;
  PieceCpuTimer timer;
  // The piece of work running on this thread, if any.
  DriverThreadWorkScope* piece_scope = nullptr;
};
thread_local DriverThreadState driver_thread;

}  // namespace

void NoteWorkQueuedForDriverThread() { work_queued_for_driver_threads = true; }

HostWaitScope::HostWaitScope() : counted_(work_queued_for_driver_threads) {
  if (!counted_) return;
  // Cheap when the thread owns no pool, which is the usual case: a host
  // thread whose kernels run elsewhere starts one only for CPU work of its
  // own.
  openmp::ReleaseCallingThreadWorkers();
  host_threads_waiting.fetch_add(1, std::memory_order_relaxed);
}

HostWaitScope::~HostWaitScope() {
  if (counted_) host_threads_waiting.fetch_sub(1, std::memory_order_relaxed);
}

namespace {

// Decides the width of a piece (or part) about to run on the calling driver
// thread, sets it, and starts timing it. `full_width` is ATen's intra-op
// thread count, read before the piece: inside it, ATen reads back the
// piece's own width.
DriverThreadWorkScope::Piece BeginPiece(DriverThreadState& state,
                                        int full_width, bool replayed) {
  DriverThreadWorkScope::Piece piece;
  piece.full_width = full_width;
  // Not widened at the moment a host thread starts to wait (Note [OpenMP
  // width of driver threads]): that would start a new OpenMP worker as the
  // host leaves its core. Replayed kernels follow the host's waits over
  // windows of them.
  const bool full = state.by_length.wide ||
                    (replayed && state.replays_by_host_waiting.wide) ||
                    at::globalContext().deterministicAlgorithms();
  piece.width = full ? piece.full_width : std::max(1, piece.full_width - 1);
  const int in_effect =
      state.team_size == 0 ? piece.full_width : state.team_size;
  if (piece.width != in_effect) {
    openmp::SetCallingThreadTeamSize(piece.width);
    state.team_size = piece.width;
  }
  state.widest_since_release =
      std::max(state.widest_since_release, piece.width);
  // A piece at this width is long from this duration on (its thread time,
  // duration times width, reaches kLongWorkThreadNs).
  piece.long_ns = (kLongWorkThreadNs + piece.width - 1) / piece.width;
  state.timer.Start(piece.long_ns / kCpuOvercountDivisor);
  return piece;
}

// Restores ATen's width after a piece; with `counts`, adds the piece to the
// thread's history and decides the width of the pieces after it.
void EndPiece(DriverThreadState& state,
              const DriverThreadWorkScope::Piece& piece, bool counts,
              bool replayed) {
  // Restored after every narrowed piece: MKL and at::init_num_threads read
  // the thread's OpenMP setting back as ATen's count, and would keep the
  // narrow one for good.
  if (state.team_size != piece.full_width) {
    openmp::SetCallingThreadTeamSize(piece.full_width);
    state.team_size = piece.full_width;
  }
  if (!counts) return;
  // Workers beyond a narrow piece's width would idle in the pool, still
  // counted against the cores. Not after a replay's whole segment: its
  // kernels decided, and giving back the workers its wide ones use would
  // start them again at the next replay.
  if (piece.width < state.widest_since_release) {
    openmp::ReleaseCallingThreadWorkers();
    state.widest_since_release = piece.width;
  }
  // The piece's CPU time, exact enough only where it decides whether the
  // piece is long: a piece shorter than that reports its wall time.
  const int64_t elapsed_ns = state.timer.Stop(piece.long_ns);
  state.by_length.Add(elapsed_ns, elapsed_ns >= piece.long_ns);
  if (replayed) {
    state.replays_by_host_waiting.Add(
        elapsed_ns, host_threads_waiting.load(std::memory_order_relaxed) > 0);
  }
}

}  // namespace

DriverThreadWorkScope::DriverThreadWorkScope()
    : piece_(BeginPiece(driver_thread, at::get_num_threads(),
                        /*replayed=*/false)) {
  driver_thread.piece_scope = this;
}

DriverThreadWorkScope::~DriverThreadWorkScope() {
  DriverThreadState& state = driver_thread;
  state.piece_scope = nullptr;
  // A piece whose parts were judged counted through them; its own time
  // would count them twice.
  EndPiece(state, piece_, /*counts=*/!has_parts_, /*replayed=*/false);
}

DriverThreadWorkPart::DriverThreadWorkPart()
    : piece_scope_(driver_thread.piece_scope) {
  if (piece_scope_ == nullptr) return;
  piece_scope_->has_parts_ = true;
  part_ = BeginPiece(driver_thread, piece_scope_->piece_.full_width,
                     /*replayed=*/true);
}

DriverThreadWorkPart::~DriverThreadWorkPart() {
  if (piece_scope_ != nullptr) {
    EndPiece(driver_thread, part_, /*counts=*/true, /*replayed=*/true);
  }
}

}  // namespace openreg
