// Note [Asynchronous execution]
//
// All work reaches a device as a host function launched on a stream, the
// driver's one execution primitive. The core wraps each piece of work in a
// heap object that owns what the work touches (the tensors and storages it
// reads and writes), so memory cannot be freed and handed out again before
// the work has run, even when Python drops its tensors right after
// enqueueing. Memory stream-ordered on the work's own stream needs no owner:
// once freed it serves only later work on that stream until the stream has
// caught up (Note [Stream-ordered reuse], device_memory_pool.h), so ops
// (structured ops, TensorIterator loops, the CPU fallback, copies, compiled
// kernels, collectives) do not hold it (OrderedOnStream, device_allocator.h;
// Note [Collectives borrow stream-ordered memory]). Once the driver has run
// the work, the object comes back to the core and is destroyed on a user
// thread: by the launching thread as soon as the launch returns if the
// driver ran it before returning (a synchronous driver; the run, seeing it
// is inside that very launch, lets go with no locked instruction), otherwise
// the next time any thread enqueues work or synchronizes.
// Destroying tensors may free device memory or touch Python objects, which
// must not happen on a driver's thread.
//
// A kernel that throws fails its launch. The driver keeps the failure sticky
// on its stream and the core keeps the kernel's message; the next
// synchronization point of that stream (stream or device synchronize, a
// blocking copy to the host, a scalar read) raises a RuntimeError naming the
// op and its message, once. The stream and device stay usable. A synchronous
// driver reports the failure from the launch itself, so there the op raises
// at once, with the same error. With OPENREG_LAUNCH_BLOCKING=1 EnqueueWork
// also waits for the work it launched and raises its failure there, so the
// op that failed raises, from its caller's Python frame.
//
// A launch the driver refuses (any failed status while the work never ran,
// even LAUNCH_FAILURE) releases the work at once and raises at the op: the
// driver will never hand it back.
//
// Thread-safety: every function may be called from any user thread. The
// failure log has its own mutex, and finished work goes back to user threads
// through a lock-free stack (Note [Handing work back without a lock] in
// core/runtime/handback_stack.h); work runs on whatever thread the driver
// chooses.
#ifndef OPENREG_CORE_TORCH_RUNTIME_STREAM_WORK_H_
#define OPENREG_CORE_TORCH_RUNTIME_STREAM_WORK_H_

#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "core/runtime/memory/stream_point.h"
#include "core/torch_runtime/torch_stream.h"
#include "core/torch_runtime/work_record.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

// Enqueues `work` on `stream` (of `device`) and returns without waiting for
// it on an asynchronous driver. Everything `work` captures is kept alive
// until it has run. `op_name` names the work in error messages.
void EnqueueWork(c10::DeviceIndex device, openreg_stream stream,
                 absl::string_view op_name, absl::AnyInvocable<void()> work);

// EnqueueWork on the calling thread's current stream of `device`.
void EnqueueOnCurrentStream(c10::DeviceIndex device, absl::string_view op_name,
                            absl::AnyInvocable<void()> work);

// EnqueueWork of a record built by MakeWorkRecord, on the record's stream.
void EnqueueRecord(std::unique_ptr<WorkRecord> record);

// Note [One launch per foreach call]
//
// ATen runs a `_foreach_*` op on a device without kernels of its own as a
// loop over the lists, one op per tensor: an optimizer step of a model with
// 28 parameters launched 224 pieces of work (AdamW on the bench's GPT-2
// model), half of the host's time per training step on threaded_sim
// (docs/performance.md). CUDA runs such an op as one kernel over all the
// tensors. openreg keeps ATen's per-tensor ops, and with them their checks,
// errors and the CPU's results to the last bit, but launches their loops
// together: while a GatheredLaunch lives, the TensorIterator loops
// (iterator_loops.h) that the calling thread enqueues on one stream are kept
// back and launched as one piece of work, in the order they were enqueued,
// when the scope launches them. A piece of two or more loops is named after
// the scope's op, in errors and in the profiler's device activity, as CUDA
// names its one kernel.
//
// Everything else the gathering thread does that would order work on a
// stream first launches what was gathered: any other work enqueued (the CPU
// fallback, structured ops, loops on another stream or device), copies,
// stream and device synchronization, queries, the allocator's wait for work
// in flight, event records and waits, and the legacy profiler's events
// (LaunchGatheredWork, called by their callers). So this thread never sees a
// stream as done, or orders another stream after it, while work enqueued on
// it is still held back. Loops on a capturing stream go to the graph as they
// come. Scopes do not nest (an inner one gathers nothing of its own) and do
// nothing on a thread that runs enqueued work.
//
// Other threads do not see gathered loops until they are launched, as if the
// op had not reached them yet; ATen's composites never wait for another
// thread in between. For that to hold, a gathered loop owns all the memory it
// uses, even memory stream-ordered on its stream (Note [Stream-ordered
// reuse]): a result the op drops when it raises is then not handed to another
// thread, or settled by its synchronization, before its writer is enqueued.
//
// A loop that fails on the stream fails the gathered piece: the error names
// the op of the piece (the scope's op for two or more loops, the loop's own
// for one) and the loop's message, and the loops after it in the piece do not
// run, as the rest of a failed kernel does not.
//
// Thread-safety: gathering is per thread; the piece is launched as any work.
class GatheredLaunch {
 public:
  // `op_name` names the gathered piece; it must outlive the scope.
  explicit GatheredLaunch(const char* op_name);
  // Launches what is still gathered. Reached by an exception, it launches it
  // too (the loops were enqueued before the error, as ATen's per-tensor
  // launches would have been) and only warns if that launch fails.
  ~GatheredLaunch();
  GatheredLaunch(const GatheredLaunch&) = delete;
  GatheredLaunch& operator=(const GatheredLaunch&) = delete;

  // Launches the gathered loops as one piece of work; raises as a launch
  // does. The scope keeps gathering afterwards.
  void Launch();

 private:
  // The calling thread's gathered loops while this scope gathers; null when
  // it does not (it is not the thread's outermost one, or the thread runs
  // enqueued work).
  struct GatheredLoops* loops_ = nullptr;
};

// Whether a GatheredLaunch of the calling thread gathers.
bool GatheringLaunches();

// Enqueues a TensorIterator loop's record: gathered when a GatheredLaunch of
// the calling thread gathers, else as EnqueueRecord. A gathered record must
// own all the memory it uses: it is enqueued later than the op that made it,
// possibly after that memory was freed.
void EnqueueLoopRecord(std::unique_ptr<WorkRecord> record);

// Launches the loops the calling thread has gathered, if any: for code that
// orders work on a stream other than by enqueueing a record (copies, event
// records and waits, the legacy profiler).
void LaunchGatheredWork();

// Runs `work` on the current stream of `device` and waits for it: for work
// whose results the calling thread needs at once (ops whose output shapes
// depend on data). Raises the failure of any work on that stream.
void RunOnCurrentStreamAndWait(c10::DeviceIndex device,
                               absl::string_view op_name,
                               absl::FunctionRef<void()> work);

// Blocks until all work enqueued on `stream` so far has run; raises the
// failure of any of it.
void SynchronizeStream(c10::DeviceIndex device, openreg_stream stream);

// Whether all work enqueued on `stream` has run; raises a failure.
bool QueryStream(c10::DeviceIndex device, openreg_stream stream);

// Blocks until all work on every stream of `device` has run; raises the
// failures of any of it.
void SynchronizeDevice(c10::DeviceIndex device);

// Destroys the work objects the driver has finished with.
void ReleaseCompletedWork();

// Blocks until every piece of work enqueued on `device` so far has run, and
// destroys it, releasing the memory it owned. Failures stay recorded for the
// next synchronization point. For the allocator's out-of-memory path; never
// call it from inside work (InsideEnqueuedWork()), which would wait for
// itself.
void WaitForEnqueuedWork(c10::DeviceIndex device);

// Whether the calling thread is running enqueued work.
bool InsideEnqueuedWork();

// Where the work the calling thread runs stands in its stream's order, if it
// is work of `device` (Note [Reuse inside work] in
// core/runtime/memory/device_memory_pool.h); otherwise no point.
StreamPoint RunningWorkPoint(c10::DeviceIndex device);

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_STREAM_WORK_H_
