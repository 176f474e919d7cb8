// Keeps the calls a process makes into Gloo in the order its collectives were
// issued.
//
// Gloo matches the collectives of different ranks by the order in which each
// rank calls it (ProcessGroupGloo tags each call with a sequence number). A
// collective on openreg calls Gloo from enqueued work, on a driver's thread;
// collectives issued on two streams may run in either order on an
// asynchronous driver, and so could reach Gloo in different orders on
// different ranks, pairing one rank's all_reduce with another's broadcast.
// Each collective therefore takes a ticket when it is issued, and its work
// calls Gloo only once every earlier ticket is done.
//
// This cannot deadlock through stream dependencies: work can only wait on
// work issued before it (an event is recorded before anyone waits on it), and
// earlier work holds earlier tickets.
//
// Thread-safety: all members may be called from any thread; `mutex_` guards
// the counters. Ticket::AwaitTurn blocks.
#ifndef OPENREG_CORE_DISTRIBUTED_ISSUE_ORDER_H_
#define OPENREG_CORE_DISTRIBUTED_ISSUE_ORDER_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"

namespace openreg {

class IssueOrder;

// One collective's place in the order. Released when done, or when destroyed
// without having run (work the driver never launched), so later tickets are
// never stuck behind it.
class IssueTicket {
 public:
  IssueTicket(IssueTicket&& other) noexcept;
  IssueTicket& operator=(IssueTicket&&) = delete;
  IssueTicket(const IssueTicket&) = delete;
  ~IssueTicket();

  // Blocks until every ticket taken before this one is released.
  void AwaitTurn();

  // Lets later tickets go; idempotent.
  void Release();

 private:
  friend class IssueOrder;
  IssueTicket(std::shared_ptr<IssueOrder> order, uint64_t number);

  std::shared_ptr<IssueOrder> order_;
  uint64_t number_;
  bool released_ = false;
};

class IssueOrder : public std::enable_shared_from_this<IssueOrder> {
 public:
  static std::shared_ptr<IssueOrder> Create();

  // Called on the issuing thread, in issue order.
  IssueTicket Take();

 private:
  friend class IssueTicket;
  IssueOrder() = default;

  void AwaitTurn(uint64_t number);
  void Release(uint64_t number);

  absl::Mutex mutex_;
  uint64_t next_to_take_ ABSL_GUARDED_BY(mutex_) = 0;
  // Every ticket below it is released.
  uint64_t first_unreleased_ ABSL_GUARDED_BY(mutex_) = 0;
  // Released tickets above first_unreleased_ (released out of order).
  absl::flat_hash_set<uint64_t> released_early_ ABSL_GUARDED_BY(mutex_);
};

// The tickets of one collective's runs, oldest first. An eager collective
// is issued once; one recorded in a graph is issued again at every replay
// (Note [Graph capture], host steps per replay) and runs once per replay,
// in replay order on its stream, so each run takes the oldest ticket.
//
// Thread-safety: Push on the issuing thread, Pop on the driver's thread;
// `mutex_` guards the queue.
class IssuedTickets {
 public:
  void Push(IssueTicket ticket);
  // The oldest ticket; none when a run was never issued.
  std::optional<IssueTicket> Pop();

 private:
  absl::Mutex mutex_;
  std::deque<IssueTicket> tickets_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace openreg

#endif  // OPENREG_CORE_DISTRIBUTED_ISSUE_ORDER_H_
