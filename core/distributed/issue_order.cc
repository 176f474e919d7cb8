#include "core/distributed/issue_order.h"

#include <utility>

namespace openreg {

IssueTicket::IssueTicket(std::shared_ptr<IssueOrder> order, uint64_t number)
    : order_(std::move(order)), number_(number) {}

IssueTicket::IssueTicket(IssueTicket&& other) noexcept
    : order_(std::move(other.order_)),
      number_(other.number_),
      released_(other.released_) {
  other.released_ = true;
}

IssueTicket::~IssueTicket() { Release(); }

void IssueTicket::AwaitTurn() { order_->AwaitTurn(number_); }

void IssueTicket::Release() {
  if (released_) return;
  released_ = true;
  order_->Release(number_);
}

std::shared_ptr<IssueOrder> IssueOrder::Create() {
  return std::shared_ptr<IssueOrder>(new IssueOrder());
}

IssueTicket IssueOrder::Take() {
  absl::MutexLock lock(&mutex_);
  return IssueTicket(shared_from_this(), next_to_take_++);
}

void IssueOrder::AwaitTurn(uint64_t number) {
  absl::MutexLock lock(&mutex_);
  const auto turn = [this, number]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    return first_unreleased_ == number;
  };
  mutex_.Await(absl::Condition(&turn));
}

void IssueOrder::Release(uint64_t number) {
  absl::MutexLock lock(&mutex_);
  if (number != first_unreleased_) {
    released_early_.insert(number);
    return;
  }
  ++first_unreleased_;
  while (released_early_.erase(first_unreleased_) > 0) ++first_unreleased_;
}

void IssuedTickets::Push(IssueTicket ticket) {
  absl::MutexLock lock(&mutex_);
  tickets_.push_back(std::move(ticket));
}

std::optional<IssueTicket> IssuedTickets::Pop() {
  absl::MutexLock lock(&mutex_);
  if (tickets_.empty()) return std::nullopt;
  std::optional<IssueTicket> oldest(std::move(tickets_.front()));
  tickets_.pop_front();
  return oldest;
}

}  // namespace openreg
