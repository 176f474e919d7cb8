#include "core/torch_runtime/stream_work.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <exception>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/runtime/handback_stack.h"
#include "core/runtime/in_flight_work.h"
#include "core/runtime/runtime.h"
#include "core/torch_runtime/autograd_thread_workers.h"
#include "core/torch_runtime/backward_thread.h"
#include "core/torch_runtime/driver_thread_width.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_capture.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {

// The loops a GatheredLaunch holds back, all for one stream of one device
// (Note [One launch per foreach call]). One per thread, reused: `records`
// keeps its capacity from one foreach op to the next.
struct GatheredLoops {
  const char* op_name = nullptr;
  c10::DeviceIndex device = -1;
  openreg_stream stream = nullptr;
  std::vector<std::unique_ptr<WorkRecord>> records;
};

namespace {

// Work the driver has run, waiting to be destroyed on a user thread (Note
// [Handing work back without a lock] in core/runtime/handback_stack.h).
class CompletedWork {
 public:
  void Push(WorkRecord* work) { stack_.Push(work); }

  // Destroys every record pushed so far, newest first (nothing depends on
  // the order); a destructor may free device memory and re-enter this. Empty
  // after every op on a synchronous driver, whose launching thread destroys
  // its own work: one plain load then.
  void DestroyAll() {
    WorkRecord* work = stack_.TakeAll();
    while (work != nullptr) {
      WorkRecord* next = work->next_completed;
      delete work;
      work = next;
    }
  }

 private:
  HandbackStack<WorkRecord, &WorkRecord::next_completed> stack_;
};

// The first failed kernel of each stream, until a synchronization reports it.
class FailureLog {
 public:
  struct Failure {
    c10::DeviceIndex device;
    std::string message;
    bool out_of_memory = false;
    int later_failures = 0;
  };

  void Record(const WorkRecord& work, absl::string_view what,
              bool out_of_memory) {
    absl::MutexLock lock(&mutex_);
    auto [it, inserted] = failures_.try_emplace(work.stream);
    if (inserted) {
      it->second.device = work.device;
      it->second.out_of_memory = out_of_memory;
      it->second.message =
          absl::StrCat(work.op_name, " failed on openreg:",
                       static_cast<int>(work.device), ": ", what);
    } else {
      ++it->second.later_failures;
    }
  }

  // Removes and returns the failures of `stream`, or of every stream of
  // `device` when `stream` is null.
  std::vector<Failure> Take(c10::DeviceIndex device, openreg_stream stream) {
    std::vector<Failure> taken;
    absl::MutexLock lock(&mutex_);
    for (auto it = failures_.begin(); it != failures_.end();) {
      const bool match =
          stream != nullptr ? it->first == stream : it->second.device == device;
      if (match) {
        taken.push_back(std::move(it->second));
        failures_.erase(it++);
      } else {
        ++it;
      }
    }
    return taken;
  }

 private:
  absl::Mutex mutex_;
  absl::flat_hash_map<openreg_stream, Failure> failures_ ABSL_GUARDED_BY(mutex_);
};

InFlightWork& InFlight() {
  static auto* in_flight = new InFlightWork();  // never destroyed
  return *in_flight;
}

// What this thread is doing with enqueued work. One thread_local object,
// reached once per function through an accessor the compiler may not inline
// (Note [Thread-locals on the launch path], core/runtime/thread_state.h).
struct ThreadWorkState {
  bool inside_enqueued_work = false;
  // How many pieces of work the driver ran on this thread: a launch that
  // changes it ran its work inline.
  uint64_t work_run = 0;
  // The record of the innermost work this thread runs, if any.
  const WorkRecord* running = nullptr;
  // The record of the innermost launch this thread is inside, if any. Work
  // the driver runs while it is the one launching runs inline; work it runs
  // outside any launch runs on a thread of the driver's own.
  const WorkRecord* launching = nullptr;
  // The loops this thread's GatheredLaunch holds back, if one gathers.
  GatheredLoops* gathering = nullptr;
};

ABSL_ATTRIBUTE_NOINLINE ThreadWorkState& ThisThreadsWork() {
  thread_local ThreadWorkState state;
  return state;
}

CompletedWork& Completed() {
  static auto* completed = new CompletedWork();  // never destroyed
  return *completed;
}

FailureLog& Failures() {
  static auto* failures = new FailureLog();  // never destroyed
  return *failures;
}

// Gives up one of the work's two owners. The last one hands the work back
// for destruction on a user thread: at once when the caller is one (a user
// thread outside any enqueued work), else through the completed list.
// An owner that sees the other gone already (always so after work ran
// inline) is the last without a locked decrement: the other never touches
// the record again, and the acquire load orders its last use before ours.
void ReleaseOwnership(WorkRecord* work, bool on_user_thread) {
  if (work->owners.load(std::memory_order_acquire) != 1 &&
      work->owners.fetch_sub(1) != 1) {
    return;
  }
  if (on_user_thread) {
    delete work;
  } else {
    Completed().Push(work);
  }
}

// The host function behind every launch. C on the driver's side: nothing may
// escape it.
openreg_status RunPendingWork(void* user_data) {
  auto* pending = static_cast<WorkRecord*>(user_data);
  const c10::DeviceIndex device = pending->device;
  openreg_status status = OPENREG_SUCCESS;
  // Work may nest on a synchronous driver: restore, do not clear.
  ThreadWorkState& this_thread = ThisThreadsWork();
  const bool was_inside = this_thread.inside_enqueued_work;
  const WorkRecord* const outer_work = this_thread.running;
  this_thread.inside_enqueued_work = true;
  this_thread.running = pending;
  ++this_thread.work_run;
  const bool on_driver_thread =
      this_thread.launching == nullptr && !was_inside;
  // Run inline, by the launch this thread is inside: that launch is the
  // record's only other owner, and it is this thread.
  const bool run_inline = this_thread.launching == pending;
  try {
    std::optional<DriverThreadWorkScope> width;
    if (on_driver_thread) {
      // Give a driver's thread the intra-op thread count the user set
      // (torch.set_num_threads), as PyTorch's own threads get it. Work run
      // inline runs on a thread that has it already.
      at::init_num_threads();
      // Note [OpenMP width of driver threads].
      width.emplace();
    }
    pending->Run();
  } catch (const c10::OutOfMemoryError& error) {
    Failures().Record(*pending, error.what_without_backtrace(),
                      /*out_of_memory=*/true);
    status = OPENREG_ERROR_LAUNCH_FAILURE;
  } catch (const c10::Error& error) {
    Failures().Record(*pending, error.what_without_backtrace(), false);
    status = OPENREG_ERROR_LAUNCH_FAILURE;
  } catch (const std::exception& error) {
    Failures().Record(*pending, error.what(), false);
    status = OPENREG_ERROR_LAUNCH_FAILURE;
  } catch (...) {
    Failures().Record(*pending, "unknown exception", false);
    status = OPENREG_ERROR_LAUNCH_FAILURE;
  }
  this_thread.inside_enqueued_work = was_inside;
  this_thread.running = outer_work;
  // Failed kernels too: they may have started OpenMP workers all the same.
  NoteWorkOnThisThread(device);
  pending->ran.store(true, std::memory_order_release);
  if (run_inline) {
    // Let go with a plain store: the launch, on this thread, finds itself
    // the last owner once the driver returns.
    pending->owners.store(1, std::memory_order_relaxed);
  } else {
    // From here on `pending` may be destroyed.
    ReleaseOwnership(pending, /*on_user_thread=*/false);
  }
  InFlight().Done(device);
  return status;
}

// How a failure is reported: at a synchronization point, or at the op that
// enqueued the work (its launch failed, or OPENREG_LAUNCH_BLOCKING made it
// wait for its own work).
struct ReportAt {
  absl::string_view op_name;  // empty at a synchronization point
  bool launch_blocking = false;
};

// Turns a driver's failed launch or synchronization into the error users
// see: the kernels' own messages when the core has them, the driver's
// otherwise, prefixed with the op when the failure is raised at one.
void ThrowIfFailed(const absl::Status& status, c10::DeviceIndex device,
                   openreg_stream stream, const ReportAt& at = {}) {
  if (status.ok()) return;
  std::vector<FailureLog::Failure> failures = Failures().Take(device, stream);
  if (status.code() != absl::StatusCode::kAborted || failures.empty()) {
    if (at.op_name.empty()) ThrowStatus(status);
    // The same code, so an allocation fault stays torch.OutOfMemoryError.
    ThrowStatus(absl::Status(
        status.code(),
        absl::StrCat("openreg: ", at.op_name, " failed on openreg:",
                     static_cast<int>(device), ": ", status.message(),
                     at.launch_blocking ? " (raised at the op because "
                                          "OPENREG_LAUNCH_BLOCKING=1)"
                                        : "")));
  }
  std::string message = "openreg: ";
  for (const FailureLog::Failure& failure : failures) {
    absl::StrAppend(&message, failure.message);
    if (failure.later_failures > 0) {
      absl::StrAppend(&message, " (and ", failure.later_failures,
                      " later failures on the same stream)");
    }
    absl::StrAppend(&message, "\n");
  }
  if (at.launch_blocking) {
    absl::StrAppend(&message,
                    "Raised at the op that failed because "
                    "OPENREG_LAUNCH_BLOCKING=1 makes every op wait for its own "
                    "work. ");
  } else if (!at.op_name.empty()) {
    absl::StrAppend(&message,
                    "Raised at the op that failed: the driver ran it before "
                    "returning. ");
  } else {
    absl::StrAppend(&message,
                    "The error is reported at the first synchronization after "
                    "the failing op was enqueued; results of work after it on "
                    "that stream are unreliable. Set OPENREG_LAUNCH_BLOCKING=1 "
                    "to raise it at the failing op instead. ");
  }
  absl::StrAppend(&message, "The device remains usable.");
  // Running out of device memory inside a kernel is still an out-of-memory
  // error, so `except torch.OutOfMemoryError` keeps working.
  TORCH_CHECK_WITH(OutOfMemoryError, !failures.front().out_of_memory, message);
  TORCH_CHECK(false, message);
}

// Launches `record` on its stream, which does not capture.
void Launch(std::unique_ptr<WorkRecord> record) {
  const c10::DeviceIndex device = record->device;
  const openreg_stream stream = record->stream;
  Runtime& runtime = RuntimeForDevice(device);
  const Driver& driver = runtime.driver();
  // Read before the launch: the frees it counts come before the work.
  record->frees_before_launch =
      runtime.device_memory().pool(device).SettleToken();
  // The driver's run and this thread share the record from here on.
  WorkRecord* pending = record.release();
  InFlight().Launched(device);
  ThreadWorkState& this_thread = ThisThreadsWork();
  const uint64_t run_before = this_thread.work_run;
  const WorkRecord* const outer_launch = this_thread.launching;
  this_thread.launching = pending;
  const absl::Status status =
      driver.LaunchHostFunc(stream, &RunPendingWork, pending);
  this_thread.launching = outer_launch;
  if (this_thread.work_run != run_before) {
    NoteWorkRanInlineOnThisThread();
  } else if (status.ok()) {
    NoteWorkQueuedForDriverThread();
  }
  // Copied only when an error may name the op: the record may be gone once
  // this thread lets go of it.
  const bool launch_blocking = runtime.config().launch_blocking;
  const std::string op_name =
      status.ok() && !launch_blocking ? std::string() : pending->op_name;
  const ReportAt at_this_op{op_name, launch_blocking};
  if (!status.ok() && !pending->ran.load(std::memory_order_acquire)) {
    // Never launched, and never will be: the driver refused the call.
    delete pending;
    InFlight().Done(device);
    ThrowIfFailed(status, device, stream, at_this_op);
  }
  // The driver runs the work (a synchronous driver already has, maybe
  // failing it) and gives it back through RunPendingWork. If it already
  // has, this thread lets go last and destroys the work at once instead of
  // queueing it for the next enqueue, unless it is itself running enqueued
  // work (maybe on a driver's thread).
  ReleaseOwnership(pending,
                   /*on_user_thread=*/!this_thread.inside_enqueued_work);
  ThrowIfFailed(status, device, stream, at_this_op);
  // Waiting inside work would wait for itself; work enqueued from work is
  // reported when its enqueuer's own wait below sees it.
  if (at_this_op.launch_blocking && !this_thread.inside_enqueued_work) {
    const absl::Status done =
        WhileHostWaits([&] { return driver.StreamSynchronize(stream); });
    ReleaseCompletedWork();
    ThrowIfFailed(done, device, stream, at_this_op);
  }
}

// The work of gathered loops launched together: each loop, in order. A loop
// that throws fails the whole piece.
struct GatheredWork {
  explicit GatheredWork(std::vector<std::unique_ptr<WorkRecord>> loops)
      : loops(std::move(loops)) {}
  void operator()() {
    for (const std::unique_ptr<WorkRecord>& loop : loops) loop->Run();
  }
  std::vector<std::unique_ptr<WorkRecord>> loops;
};

// Hands `record` to a capturing graph, or launches it.
void Submit(std::unique_ptr<WorkRecord> record) {
  if (IsCapturing(record->stream)) {
    // A graph keeps its work as closures, run at every replay.
    const c10::DeviceIndex device = record->device;
    const openreg_stream stream = record->stream;
    const std::string op_name = record->op_name;
    absl::AnyInvocable<void()> work = [record = std::move(record)] {
      record->Run();
    };
    if (RecordWorkIfCapturing(stream, op_name, work)) return;
    // The capture ended meanwhile (on another thread): run it eagerly.
    record = MakeWorkRecord<absl::AnyInvocable<void()>>(op_name, device,
                                                        stream, std::move(work));
  }
  Launch(std::move(record));
}

// Submits what `loops` holds back: a single loop as itself, more as one piece.
void SubmitGathered(GatheredLoops& loops) {
  if (loops.records.empty()) return;
  if (loops.records.size() == 1) {
    std::unique_ptr<WorkRecord> record = std::move(loops.records.front());
    loops.records.clear();
    Submit(std::move(record));
    return;
  }
  std::vector<std::unique_ptr<WorkRecord>> records(
      std::make_move_iterator(loops.records.begin()),
      std::make_move_iterator(loops.records.end()));
  loops.records.clear();
  Submit(MakeWorkRecord<GatheredWork>(loops.op_name, loops.device,
                                      loops.stream, std::move(records)));
}

GatheredLoops& ThisThreadsGatheredLoops() {
  thread_local GatheredLoops loops;
  return loops;
}

}  // namespace

GatheredLaunch::GatheredLaunch(const char* op_name) {
  ThreadWorkState& this_thread = ThisThreadsWork();
  if (this_thread.gathering != nullptr || this_thread.inside_enqueued_work) {
    return;
  }
  loops_ = &ThisThreadsGatheredLoops();
  loops_->op_name = op_name;
  loops_->device = -1;
  loops_->stream = nullptr;
  this_thread.gathering = loops_;
}

GatheredLaunch::~GatheredLaunch() {
  if (loops_ == nullptr) return;
  ThisThreadsWork().gathering = nullptr;
  if (loops_->records.empty()) return;
  // Only reached by an exception: Launch() ends every normal use.
  try {
    SubmitGathered(*loops_);
  } catch (const std::exception& error) {
    try {
      TORCH_WARN("openreg: the loops ", loops_->op_name,
                 " enqueued before its error could not be launched either: ",
                 error.what());
    } catch (...) {  // warnings turned into errors: the first error wins
    }
  }
}

void GatheredLaunch::Launch() {
  if (loops_ != nullptr) SubmitGathered(*loops_);
}

void LaunchGatheredWork() {
  if (GatheredLoops* loops = ThisThreadsWork().gathering) {
    SubmitGathered(*loops);
  }
}

bool GatheringLaunches() { return ThisThreadsWork().gathering != nullptr; }

void EnqueueLoopRecord(std::unique_ptr<WorkRecord> record) {
  ThreadWorkState& this_thread = ThisThreadsWork();
  GatheredLoops* loops = this_thread.gathering;
  if (loops == nullptr) {
    // Every op's path: EnqueueRecord without looking for gathered work again.
    ReleaseCompletedWork();
    Submit(std::move(record));
    return;
  }
  // Work enqueued from inside work (run inline on this thread) is not held
  // back: it belongs to the work that runs, not to the foreach op.
  if (this_thread.inside_enqueued_work || IsCapturing(record->stream)) {
    EnqueueRecord(std::move(record));
    return;
  }
  if (loops->device != record->device || loops->stream != record->stream) {
    SubmitGathered(*loops);
    loops->device = record->device;
    loops->stream = record->stream;
  }
  loops->records.push_back(std::move(record));
}

void EnqueueRecord(std::unique_ptr<WorkRecord> record) {
  // Work gathered earlier on this thread goes first.
  LaunchGatheredWork();
  ReleaseCompletedWork();
  Submit(std::move(record));
}

void EnqueueWork(c10::DeviceIndex device, openreg_stream stream,
                 absl::string_view op_name, absl::AnyInvocable<void()> work) {
  EnqueueRecord(MakeWorkRecord<absl::AnyInvocable<void()>>(op_name, device,
                                                           stream,
                                                           std::move(work)));
}

void EnqueueOnCurrentStream(c10::DeviceIndex device, absl::string_view op_name,
                            absl::AnyInvocable<void()> work) {
  EnqueueWork(device, CurrentDriverStream(device), op_name, std::move(work));
}

void RunOnCurrentStreamAndWait(c10::DeviceIndex device,
                               absl::string_view op_name,
                               absl::FunctionRef<void()> work) {
  const openreg_stream stream = CurrentDriverStream(device);
  ForbidWhileCapturing(
      device, stream,
      absl::StrCat(op_name,
                   " (its results' shapes depend on the data, so it "
                   "waits for its own work)"));
  // `work` refers to the caller's frame, which outlives it: we wait below.
  EnqueueWork(device, stream, op_name, [work] { work(); });
  SynchronizeStream(device, stream);
}

void SynchronizeStream(c10::DeviceIndex device, openreg_stream stream) {
  ForbidWhileCapturing(device, stream, "synchronizing a capturing stream");
  LaunchGatheredWork();
  Runtime& runtime = RuntimeForDevice(device);
  DeviceMemoryPool& memory = runtime.device_memory().pool(device);
  const uint64_t freed_before = memory.SettleToken();
  const absl::Status status = WhileHostWaits(
      [&] { return runtime.driver().StreamSynchronize(stream); });
  // Memory freed on the stream before the wait is now reusable anywhere.
  if (status.ok()) memory.Settle(stream, freed_before);
  ReleaseCompletedWork();
  ThrowIfFailed(status, device, stream);
}

bool QueryStream(c10::DeviceIndex device, openreg_stream stream) {
  ForbidWhileCapturing(device, stream, "querying a capturing stream");
  LaunchGatheredWork();
  absl::StatusOr<bool> ready =
      RuntimeForDevice(device).driver().StreamQuery(stream);
  ReleaseCompletedWork();
  ThrowIfFailed(ready.status(), device, stream);
  return *ready;
}

void SynchronizeDevice(c10::DeviceIndex device) {
  ForbidWhileCapturing(device, /*stream=*/nullptr, "device synchronize");
  LaunchGatheredWork();
  Runtime& runtime = RuntimeForDevice(device);
  DeviceMemoryPool& memory = runtime.device_memory().pool(device);
  const uint64_t freed_before = memory.SettleToken();
  const absl::Status status = WhileHostWaits(
      [&] { return runtime.driver().DeviceSynchronize(device); });
  if (status.ok()) memory.Settle(/*stream=*/nullptr, freed_before);
  ReleaseCompletedWork();
  ThrowIfFailed(status, device, /*stream=*/nullptr);
}

void ReleaseCompletedWork() { Completed().DestroyAll(); }

void WaitForEnqueuedWork(c10::DeviceIndex device) {
  LaunchGatheredWork();
  WhileHostWaits([device] { InFlight().AwaitNoneInFlight(device); });
  ReleaseCompletedWork();
}

bool InsideEnqueuedWork() { return ThisThreadsWork().inside_enqueued_work; }

StreamPoint RunningWorkPoint(c10::DeviceIndex device) {
  const WorkRecord* running = ThisThreadsWork().running;
  if (running == nullptr || running->device != device) return {};
  return {running->stream, running->frees_before_launch};
}

}  // namespace openreg
