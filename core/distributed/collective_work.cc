#include "core/distributed/collective_work.h"

#include <c10/util/Exception.h>

#include <utility>

#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {

void CollectiveOutcome::Fail(std::string message) {
  absl::MutexLock lock(&mutex_);
  failure_ = std::move(message);
}

void CollectiveOutcome::SetSourceRank(int rank) {
  absl::MutexLock lock(&mutex_);
  source_rank_ = rank;
}

std::optional<std::string> CollectiveOutcome::failure() const {
  absl::MutexLock lock(&mutex_);
  return failure_;
}

int CollectiveOutcome::source_rank() const {
  absl::MutexLock lock(&mutex_);
  return source_rank_;
}

CollectiveWork::CollectiveWork(int rank, c10d::OpType type,
                               c10::Stream stream,
                               std::vector<at::Tensor> outputs,
                               std::shared_ptr<const CollectiveOutcome> outcome,
                               bool blocks_host)
    : c10d::Work(rank, type),
      stream_(stream),
      done_(c10::DeviceType::PrivateUse1),
      outputs_(std::move(outputs)),
      outcome_(std::move(outcome)),
      blocks_host_(blocks_host) {
  done_.record(stream_);
  future_ = c10::make_intrusive<c10::ivalue::Future>(
      c10::ListType::create(c10::TensorType::get()),
      std::vector<c10::Device>{stream_.device()});
  // Records the future's events on the current stream, which is the
  // collective's: the value is ready once the stream gets past it.
  future_->markCompleted(c10::IValue(outputs_));
}

bool CollectiveWork::isCompleted() { return done_.query(); }

bool CollectiveWork::isSuccess() const {
  return !outcome_->failure().has_value();
}

std::exception_ptr CollectiveWork::exception() const {
  const std::optional<std::string> failure = outcome_->failure();
  if (!failure.has_value()) return nullptr;
  return std::make_exception_ptr(c10::Error(*failure));
}

int CollectiveWork::sourceRank() const {
  // Only known once the receive has run.
  done_.synchronize();
  RaiseIfFailed();
  return outcome_->source_rank();
}

std::vector<at::Tensor> CollectiveWork::result() { return outputs_; }

void CollectiveWork::blockCurrentStream() {
  done_.block(CurrentStream(stream_.device_index()));
}

void CollectiveWork::synchronize() {
  blockCurrentStream();
  if (blocks_host_) done_.synchronize();
  RaiseIfFailed();
}

bool CollectiveWork::wait(std::chrono::milliseconds /*timeout*/) {
  synchronize();
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> CollectiveWork::getFuture() {
  return future_;
}

void CollectiveWork::RaiseIfFailed() const {
  const std::optional<std::string> failure = outcome_->failure();
  if (!failure.has_value()) return;
  // Raises the failure sticky on the stream, with every other failure there,
  // and clears it; if an earlier synchronization has reported it already,
  // the message below still tells this caller.
  SynchronizeStream(stream_.device_index(), DriverStreamOf(stream_));
  TORCH_CHECK(false, *failure);
}

}  // namespace openreg
