// Note [Backward on the calling thread for drivers that run work inline]
//
// PyTorch's autograd engine runs the backward nodes of a device on a thread
// of its own per device ("pt_autograd_<index>") while the thread that called
// backward() waits. CUDA wants that: its kernels run on the GPU, and the
// device thread only launches them. A driver that runs each piece of work
// inline, on the thread that launches it (cpu_sim), gains nothing from the
// hop and pays for it twice:
//   - every backward pass hands over to another thread and back;
//   - that thread runs the backward's kernels, so it starts its own pool of
//     OpenMP workers beside the calling thread's. With more pooled threads
//     than cores, libgomp makes every barrier in the process sleep after a
//     short spin, and each parallel region then costs futex sleeps and
//     wake-ups: 42 voluntary context switches per training step of the
//     example's model against 0 on the CPU, 2.2x its time
//     (docs/performance.md, "Backward on the calling thread").
// So the first time a thread sees the driver run work inline during one of
// its launches, the core turns autograd's multithreading off for that thread
// (torch.autograd.set_multithreading_enabled(False), the switch PyTorch
// itself uses to keep a backward pass on its caller): from then on the
// backward passes that thread starts run on it, as on the CPU, with its one
// pool. Drivers that run work on threads of their own (threaded_sim) never
// run it inline, and keep CUDA's device threads.
//
// The autograd engine also starts its device threads (one per device of every
// accelerator) at the first backward pass of the process, whichever thread it
// runs on. On cpu_sim that start, in the middle of a backward pass whose
// kernels use OpenMP teams on two cores, made the first backward pass 1.0-4.0
// ms against the CPU's 0.6 ms: the process's first training step 2.3x the
// CPU's (docs/performance.md, "The first backward pass"). So the same first
// inline launch also starts those threads, through the engine's own public
// initialize_device_threads_pool, while nothing else is running: the process
// pays the thread start once either way, and the first backward pass then
// costs what the CPU's does.
//
// The switch is the thread's own autograd state: code that sets it later,
// explicitly, wins (with torch.autograd.set_multithreading_enabled(True) a
// backward pass uses the device thread again), and the core decides once per
// thread, so it never undoes the user's choice. PyTorch's own threads are
// left alone: autograd device threads take their state from each task.
//
// Thread-safety: per thread state only.
#ifndef OPENREG_CORE_TORCH_RUNTIME_BACKWARD_THREAD_H_
#define OPENREG_CORE_TORCH_RUNTIME_BACKWARD_THREAD_H_

namespace openreg {

// Called by a launching thread after a launch during which the driver ran
// the work on this same thread.
void NoteWorkRanInlineOnThisThread();

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_BACKWARD_THREAD_H_
