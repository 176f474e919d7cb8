// The Work a collective on openreg returns, with NCCL's semantics.
//
// A collective is enqueued on the caller's current stream; `done_` is
// recorded on that stream right after it. wait() and synchronize() make the
// *current* stream wait for `done_` and return at once (the host does not
// block), except for barrier, whose point is to block the host. isCompleted()
// queries the event. The future is marked completed when the Work is created,
// with events on the collective's stream (c10::ivalue::Future records them
// through openreg's DeviceGuardImpl), so callbacks such as DDP comm hooks are
// stream-ordered after the collective, as with NCCL.
//
// A collective that fails (a peer died, a timeout) fails its enqueued work:
// the failure is sticky on the stream and raised at its next synchronization
// point. wait() and synchronize() raise it at once when the failure has
// already happened by then.
//
// Thread-safety: CollectiveOutcome is written on a driver thread and read on
// user threads; its mutex guards its fields. A CollectiveWork is used from
// user threads only.
#ifndef OPENREG_CORE_DISTRIBUTED_COLLECTIVE_WORK_H_
#define OPENREG_CORE_DISTRIBUTED_COLLECTIVE_WORK_H_

#include <ATen/core/ivalue.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace openreg {

// What the enqueued work of one collective reports back.
class CollectiveOutcome {
 public:
  void Fail(std::string message);
  void SetSourceRank(int rank);

  std::optional<std::string> failure() const;
  int source_rank() const;

 private:
  mutable absl::Mutex mutex_;
  std::optional<std::string> failure_ ABSL_GUARDED_BY(mutex_);
  int source_rank_ ABSL_GUARDED_BY(mutex_) = -1;
};

class CollectiveWork final : public c10d::Work {
 public:
  // Call right after enqueueing the collective on `stream`, which must be the
  // current stream of its device.
  CollectiveWork(int rank, c10d::OpType type, c10::Stream stream,
                 std::vector<at::Tensor> outputs,
                 std::shared_ptr<const CollectiveOutcome> outcome,
                 bool blocks_host);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  int sourceRank() const override;
  std::vector<at::Tensor> result() override;
  void synchronize() override;
  void blockCurrentStream() override;
  // `timeout` is not used: the process group's timeout already bounds the
  // collective itself, and the host does not wait for it here.
  bool wait(std::chrono::milliseconds timeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  // Raises the collective's failure if it has failed by now.
  void RaiseIfFailed() const;

  c10::Stream stream_;
  c10::Event done_;
  std::vector<at::Tensor> outputs_;
  std::shared_ptr<const CollectiveOutcome> outcome_;
  bool blocks_host_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_DISTRIBUTED_COLLECTIVE_WORK_H_
