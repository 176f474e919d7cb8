// Gives back the OpenMP workers of PyTorch's autograd device threads once the
// device they serve has gone idle (Note [OpenMP worker pools on device
// threads], third_party/openmp/thread_workers.h).
//
// PyTorch runs the backward pass of openreg tensors on its own per-device
// threads ("pt_autograd_<index>"), and a synchronous driver runs each kernel
// inline on the thread that launches it, so those threads end up owning OpenMP
// pools. The core cannot run code on a PyTorch thread when it likes, except
// through the autograd engine: a one-node graph whose input lives on device d
// runs its node on d's autograd thread. A core-owned thread (the releaser)
// watches for the device to stay idle for kIdleBeforeRelease and then runs
// such a graph, whose node releases that thread's pool.
//
// Drivers that run kernels on threads of their own release those themselves
// (threaded_sim: its `idle_release_ms` option).
//
// Thread-safety: every function may be called from any thread.
// NoteWorkOnThisThread costs a thread-local check, and an atomic increment on
// autograd threads. The releaser thread starts at the first work on an
// autograd thread and runs until StopReleasingAutogradThreadWorkers, which the
// Python package calls at interpreter exit, while the Python autograd engine
// it uses is still whole.
#ifndef OPENREG_CORE_TORCH_RUNTIME_AUTOGRAD_THREAD_WORKERS_H_
#define OPENREG_CORE_TORCH_RUNTIME_AUTOGRAD_THREAD_WORKERS_H_

#include <c10/core/Device.h>

namespace openreg {

// Called by every piece of work the core runs, on the thread running it.
void NoteWorkOnThisThread(c10::DeviceIndex device);

// Whether the calling thread is one of the autograd engine's device threads.
bool OnAutogradDeviceThread();

// Stops the releaser thread for good, waiting for a release in progress.
void StopReleasingAutogradThreadWorkers();

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_AUTOGRAD_THREAD_WORKERS_H_
