// Note [OpenMP width of driver threads]
//
// A driver that runs work on threads of its own (threaded_sim: one worker per
// stream) runs ATen's CPU kernels there, and each such thread starts its own
// pool of OpenMP workers for the parallel ones. The host thread, meanwhile,
// keeps the pool its own CPU work made, and Python keeps it busy enqueueing.
// On a machine with few cores that is one team too many:
//   - with more pooled threads than cores, libgomp makes every barrier in the
//     process sleep instead of spin: each parallel region then pays futex
//     sleeps and wake-ups (817, 379 and 774 context switches per training
//     step of the bench's LSTM, GPT-2 and ResNet on threaded_sim);
//   - without that throttling, a region's workers spin for milliseconds after
//     it ends, on the core the host needs to enqueue the next short op.
// A GPU leaves the host's cores alone; openreg's simulated device shares
// them, so it sizes its teams the way a host that wants both to progress
// would:
//   - A driver thread whose recent work is mostly short kernels runs them on
//     one thread fewer than ATen's intra-op count (at least one), leaving a
//     core to the host, and gives its extra workers back when it narrows.
//     "Short" is judged by the work's thread time (the driver thread's CPU
//     time, times the width) over windows of a few milliseconds of it, with
//     hysteresis so that a model mixing both does not flip at every op.
//   - A driver thread whose recent work is mostly long kernels (large
//     matmuls and convolutions) uses every thread, once two windows in a
//     row say so: a thread's first kernels pay one-time set-up (the
//     example's first training step takes ~2.3 ms of the worker's CPU, its
//     second 0.8 ms; three of the first step's kernels take 0.2-0.9 ms
//     each, 0.05-0.1 ms the next time), so one window of long work can be
//     nothing but that, and widening starts a pool (below). A piece's CPU
//     time is measured without a system call per piece (Note [Timing driver
//     work without a system call per piece] in piece_cpu_timer.h).
//   - A host thread that is about to wait for the device gives back its own
//     idle pool first, if its work runs on driver threads: the driver's team
//     then has the cores to itself.
// The width follows the work's history only, not whether a host thread is
// waiting right now. Starting a pool is not free: the scheduler often puts
// a new OpenMP worker on the core of the driver thread that started it, and
// the two then spin-wait on each other at every barrier, a whole time slice
// each (~4 ms), until the load balancer separates them. Widening a narrow
// thread when the host starts to wait looked free (the host has nothing to
// do) but started that worker just as the host left its core; with it, and
// with single windows of set-up widening a thread, the first training step
// of one fresh process in four to six took 8-47 ms instead of 4. The short
// kernels behind such a wait gain nothing from a second thread.
// The thread count ATen sees (torch.get_num_threads) never changes: only the
// calling driver thread's OpenMP setting does, for the duration of one piece
// of work.
//
// A graph replay runs a segment of recorded kernels as one piece. Its length
// says nothing about the host: short kernels launched one by one keep the
// host busy, the same kernels replayed leave it free, or busy with anything
// else. So a replay's kernels are judged as parts, each with its own width:
//   - they count in the thread's history like kernels launched one by one;
//   - they also run at full width while, over the thread's recent replayed
//     kernels, a host thread was mostly waiting for the device (the same
//     windows and hysteresis, over the share of the parts' time during which
//     a host thread waited in a HostWaitScope).
// Judged as one long piece, a replay ran its kernels at full width beside a
// host busy with the next step's Python (torch.compile's reduce-overhead mode
// replays forward and backward while the host runs the rest), and every
// parallel region's barrier waited for a team-mate the host had displaced:
// the example's compiled step took 2.0-3.5 ms on threaded_sim against
// 0.9-1.3 ms eager, and 1.1-1.2 ms judged by parts. Judged by their lengths
// alone, the kernels of a replay the host only waits for ran on one thread
// with the other core idle (docs/performance.md, "A graph replay's kernels
// judged one by one").
//
// The price is determinism, as with CUDA's fastest kernels: some of ATen's
// CPU kernels split their work by the team size (parallel reductions, the
// weight gradients of the norms), so their last bits depend on the width,
// which depends on timing. Under torch.use_deterministic_algorithms(True)
// every team is full width: results are then the same in every run, and the
// same as CPU eager's with ATen's thread count.
//
// Drivers that run work inline on the launching thread (cpu_sim) are not
// concerned: their work runs on the host thread, with its one pool.
//
// Thread-safety: the width state is per driver thread, and whether a host
// thread's work goes to driver threads is per host thread (both
// thread_local). The count of host threads waiting is one process-wide
// atomic, read without ordering: a stale read misplaces one kernel's time in
// a window of many. Every function may be called from any thread.
#ifndef OPENREG_CORE_TORCH_RUNTIME_DRIVER_THREAD_WIDTH_H_
#define OPENREG_CORE_TORCH_RUNTIME_DRIVER_THREAD_WIDTH_H_

#include <cstdint>
#include <utility>

namespace openreg {

// Called by a host thread after a launch that left its work to a driver's
// thread.
void NoteWorkQueuedForDriverThread();

// Held by a host thread around a wait that blocks it on the device (stream,
// device and event synchronization, the allocator waiting for work in
// flight), if its work runs on driver threads: gives back the thread's idle
// OpenMP pool first, and counts the thread as waiting meanwhile.
class HostWaitScope {
 public:
  HostWaitScope();
  ~HostWaitScope();
  HostWaitScope(const HostWaitScope&) = delete;
  HostWaitScope& operator=(const HostWaitScope&) = delete;

 private:
  // Whether this thread's work runs on driver threads, so that it counts.
  bool counted_;
};

// Calls `wait`, which blocks the calling host thread on the device, inside a
// HostWaitScope, and returns what it returns.
template <typename Wait>
auto WhileHostWaits(Wait&& wait) {
  HostWaitScope waiting;
  return std::forward<Wait>(wait)();
}

// Held around one piece of work on a driver's own thread (not work a driver
// runs inline during a launch): sets the thread's OpenMP team size for it,
// and restores ATen's count after, timing the work for the next decision.
class DriverThreadWorkScope {
 public:
  DriverThreadWorkScope();
  ~DriverThreadWorkScope();
  DriverThreadWorkScope(const DriverThreadWorkScope&) = delete;
  DriverThreadWorkScope& operator=(const DriverThreadWorkScope&) = delete;

  // The width and timing of one piece, or of one part of a piece.
  struct Piece {
    // ATen's intra-op thread count, restored after the work.
    int full_width = 0;
    int width = 0;
    // The duration from which a piece at `width` counts as long.
    int64_t long_ns = 0;
  };

 private:
  Piece piece_;
  // Whether parts were judged inside this piece (DriverThreadWorkPart):
  // then they, not the whole, count in the thread's history.
  bool has_parts_ = false;
  friend class DriverThreadWorkPart;
};

// Held around one kernel of a piece of work made of many (a graph replay's
// segment): the kernel gets the width its own history decides, and counts in
// that history instead of the whole piece. Does nothing outside a
// DriverThreadWorkScope, that is on a thread that runs work inline.
class DriverThreadWorkPart {
 public:
  DriverThreadWorkPart();
  ~DriverThreadWorkPart();
  DriverThreadWorkPart(const DriverThreadWorkPart&) = delete;
  DriverThreadWorkPart& operator=(const DriverThreadWorkPart&) = delete;

 private:
  // Null when there is no enclosing piece.
  DriverThreadWorkScope* piece_scope_;
  DriverThreadWorkScope::Piece part_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_DRIVER_THREAD_WIDTH_H_
