// One piece of enqueued work and the bookkeeping that travels with it through
// the driver (Note [Asynchronous execution] in stream_work.h).
//
// Note [One allocation per piece of work]
// Every op launches one record, so its cost is part of every op's. The work
// (a closure owning the op's tensors or iterator) is stored inside the record,
// built in place by MakeWorkRecord: one heap allocation per op, not one for
// the record plus one for a type-erased closure (absl::AnyInvocable keeps
// closures of more than two pointers on the heap, and an op's closure always
// is). Callers that already hold an AnyInvocable get a record holding it.
//
// Thread-safety: the launching thread builds a record and the driver runs it;
// `ran`, `owners` and `next_completed` are the only fields both touch
// (stream_work.cc says how).
#ifndef OPENREG_CORE_TORCH_RUNTIME_WORK_RECORD_H_
#define OPENREG_CORE_TORCH_RUNTIME_WORK_RECORD_H_

#include <c10/core/Device.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

class WorkRecord {
 public:
  WorkRecord(absl::string_view op_name, c10::DeviceIndex device,
             openreg_stream stream)
      : op_name(op_name), device(device), stream(stream) {}
  virtual ~WorkRecord() = default;

  WorkRecord(const WorkRecord&) = delete;
  WorkRecord& operator=(const WorkRecord&) = delete;

  // Runs the work. A captured graph runs the same record at every replay.
  virtual void Run() = 0;

  // Kept for error messages: the work may fail after the caller's name is
  // gone.
  const std::string op_name;
  const c10::DeviceIndex device;
  const openreg_stream stream;
  // Whether the driver has called the record's host function. Read by the
  // launching thread after a failed launch: a driver may fail the call (even
  // with LAUNCH_FAILURE, or an injected fault) without ever running the work,
  // and then nothing else would release it or count it done. Stored with
  // release and loaded with acquire: a sequentially consistent store is a
  // locked instruction on every op.
  std::atomic<bool> ran{false};
  // The device pool's SettleToken() read before the launch: where the work
  // stands among the stream's frees (Note [Reuse inside work] in
  // core/runtime/memory/device_memory_pool.h). A record a graph keeps is
  // never launched itself: it runs inside a replay's work, whose count
  // applies.
  uint64_t frees_before_launch = 0;
  // The launching thread and the driver's run each own the record; the last
  // one to let go destroys it on a user thread.
  std::atomic<int> owners{2};
  // The next record in stream_work.cc's stack of work waiting to be
  // destroyed, once the record is on it (core/runtime/handback_stack.h).
  WorkRecord* next_completed = nullptr;
};

template <typename Work>
class WorkRecordOf final : public WorkRecord {
 public:
  template <typename... Args>
  WorkRecordOf(absl::string_view op_name, c10::DeviceIndex device,
               openreg_stream stream, Args&&... args)
      : WorkRecord(op_name, device, stream),
        work_(std::forward<Args>(args)...) {}

  void Run() override { work_(); }

  // The work, for a caller that finishes building it in place before the
  // record is enqueued (iterator_loops.h builds its TensorIterator there).
  Work& work() { return work_; }

 private:
  Work work_;
};

// A record whose work is a `Work` built in place from `args`.
template <typename Work, typename... Args>
std::unique_ptr<WorkRecordOf<Work>> MakeWorkRecord(absl::string_view op_name,
                                                   c10::DeviceIndex device,
                                                   openreg_stream stream,
                                                   Args&&... args) {
  return std::make_unique<WorkRecordOf<Work>>(op_name, device, stream,
                                              std::forward<Args>(args)...);
}

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_WORK_RECORD_H_
