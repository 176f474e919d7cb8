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
// thread_local). Every function may be called from any thread.
#ifndef OPENREG_CORE_TORCH_RUNTIME_DRIVER_THREAD_WIDTH_H_
#define OPENREG_CORE_TORCH_RUNTIME_DRIVER_THREAD_WIDTH_H_

#include <cstdint>

namespace openreg {

// Called by a host thread after a launch that left its work to a driver's
// thread.
void NoteWorkQueuedForDriverThread();

// Called by a host thread just before it blocks on the device (stream,
// device and event synchronization, the allocator waiting for work in
// flight): gives back the thread's idle OpenMP pool if its work runs on
// driver threads.
void ReleaseHostWorkersBeforeWaiting();

// Held around one piece of work on a driver's own thread (not work a driver
// runs inline during a launch): sets the thread's OpenMP team size for it,
// and restores ATen's count after, timing the work for the next decision.
class DriverThreadWorkScope {
 public:
  DriverThreadWorkScope();
  ~DriverThreadWorkScope();
  DriverThreadWorkScope(const DriverThreadWorkScope&) = delete;
  DriverThreadWorkScope& operator=(const DriverThreadWorkScope&) = delete;

 private:
  // ATen's intra-op thread count, restored after the work.
  int full_width_;
  int width_;
  // The duration from which a piece at width_ counts as long.
  int64_t long_piece_ns_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_DRIVER_THREAD_WIDTH_H_
