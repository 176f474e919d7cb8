// Note [OpenMP worker pools on device threads]
//
// ATen's CPU kernels use OpenMP, and a thread that runs a parallel region is
// left owning a pool of OpenMP worker threads that lives as long as the thread.
// openreg runs kernels on threads that exist only for device work: a driver's
// execution threads, and PyTorch's autograd device threads when a synchronous
// driver runs the backward pass inline. libgomp counts every pooled thread in
// the process, and once there are more of them than cores it makes every
// OpenMP barrier in the process sleep instead of spin: the application's own
// CPU work then pays a futex wake-up per parallel region. Measured here: a
// small CPU training step ran 1.5-3x slower, for good, in a process that had
// used openreg (its main thread made ~11 voluntary context switches per step
// instead of 0). A real device costs the host nothing once it is idle, so the
// threads that ran device work give their pools back once the device has been
// idle a while; the next parallel kernel on them makes a new pool.
//
// Only an OpenMP runtime the process already loaded is asked; nothing here
// links one. Thread-safety: acts on the calling thread only; any thread.
#ifndef OPENREG_THIRD_PARTY_OPENMP_THREAD_WORKERS_H_
#define OPENREG_THIRD_PARTY_OPENMP_THREAD_WORKERS_H_

namespace openreg::openmp {

// Releases the OpenMP worker threads the calling thread owns, if an OpenMP
// runtime is loaded; does nothing otherwise. Joins those threads, so it may
// take a while when the thread owns a pool (call it when idle, not per
// kernel); a call on a thread that owns none is cheap.
void ReleaseCallingThreadWorkers();

// Sets how many threads the parallel regions the calling thread starts use
// (omp_set_num_threads, which acts on the calling thread's own setting, not
// on the process or on ATen's intra-op count), if an OpenMP runtime is
// loaded; does nothing otherwise. Cheap: called around kernels.
void SetCallingThreadTeamSize(int threads);

}  // namespace openreg::openmp

#endif  // OPENREG_THIRD_PARTY_OPENMP_THREAD_WORKERS_H_
