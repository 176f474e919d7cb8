// Note [Timing driver work without a system call per piece]
// The OpenMP width of a driver thread follows the CPU time of its recent
// pieces of work (Note [OpenMP width of driver threads]): on a loaded
// machine the wall time of a short kernel the scheduler preempted would look
// long and widen the team. But Linux reads a thread's CPU clock only by a
// system call, and two per piece cost the driver thread about 1.3 us on this
// project's machines (mitigations make every system call dear), five times
// the rest of what a tiny op costs there. When the host thread and the
// worker share a core, which the scheduler often arranges, that time came
// straight out of the host's: threaded_sim's tiny add took 3.2 us instead of
// 1.9.
//
// So a piece is timed by the wall clock, read in user space (vDSO), and the
// CPU clock is read only
//   - at the end of a piece whose wall time reaches the duration that
//     matters to the caller (`decisive_ns`: a long piece). Its CPU time is
//     then the smaller of its wall time and the CPU time since the last
//     reading, which over-counts it by the thread's CPU time between that
//     reading and the piece's start;
//   - at the start of a piece once the last reading is older (in wall time)
//     than the caller's `max_overcount_ns`. The thread's CPU time cannot
//     exceed the wall time passed, so that bounds the over-count.
// A piece shorter than `decisive_ns` by the wall clock is shorter by the CPU
// clock too, and reports its wall time. Tiny kernels run back to back read
// the CPU clock once per `max_overcount_ns`, not twice per kernel.
//
// Thread-safety: none; one timer per thread (the driver thread's state is
// thread_local), timing only the calling thread.
#ifndef OPENREG_CORE_TORCH_RUNTIME_PIECE_CPU_TIMER_H_
#define OPENREG_CORE_TORCH_RUNTIME_PIECE_CPU_TIMER_H_

#include <cstdint>

namespace openreg {

class PieceCpuTimer {
 public:
  // A clock in nanoseconds.
  using Clock = int64_t (*)();

  // The calling thread's CPU clock and a monotonic wall clock. constexpr, so
  // that a thread_local timer needs no initialization guard.
  constexpr PieceCpuTimer() : PieceCpuTimer(MonotonicNs, ThreadCpuNs) {}
  // Other clocks, for tests.
  constexpr PieceCpuTimer(Clock wall, Clock thread_cpu)
      : wall_(wall), thread_cpu_(thread_cpu) {}

  // Before a piece; its CPU time will be over-counted by less than
  // `max_overcount_ns`.
  void Start(int64_t max_overcount_ns);

  // After it: its CPU time (over-counted as above) if its wall time reached
  // `decisive_ns`, else its wall time, which is then below `decisive_ns` and
  // at least its CPU time.
  int64_t Stop(int64_t decisive_ns);

 private:
  static int64_t MonotonicNs();
  static int64_t ThreadCpuNs();
  void ReadCpuClock(int64_t wall_ns);

  Clock wall_;
  Clock thread_cpu_;
  int64_t start_wall_ns_ = 0;
  bool has_reading_ = false;
  // The CPU clock at the last reading, and the wall clock then.
  int64_t reading_cpu_ns_ = 0;
  int64_t reading_wall_ns_ = 0;
};

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_PIECE_CPU_TIMER_H_
