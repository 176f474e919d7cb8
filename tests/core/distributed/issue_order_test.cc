#include "core/distributed/issue_order.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace openreg {
namespace {

TEST(IssueOrderTest, LaterTicketWaitsForEarlierOne) {
  auto order = IssueOrder::Create();
  IssueTicket first = order->Take();
  IssueTicket second = order->Take();
  std::atomic<bool> second_ran{false};
  std::thread later([&] {
    second.AwaitTurn();
    second_ran = true;
    second.Release();
  });
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_FALSE(second_ran.load()) << "ran before the earlier ticket";
  first.AwaitTurn();  // the first ticket's turn comes at once
  first.Release();
  later.join();
  EXPECT_TRUE(second_ran.load());
}

TEST(IssueOrderTest, ReleasedOutOfOrderStillAdvances) {
  auto order = IssueOrder::Create();
  IssueTicket first = order->Take();
  IssueTicket second = order->Take();
  IssueTicket third = order->Take();
  second.Release();  // e.g. work the driver never ran
  first.Release();
  third.AwaitTurn();  // would block forever if the order were stuck
  third.Release();
}

TEST(IssueOrderTest, DestroyedTicketReleasesItsTurn) {
  auto order = IssueOrder::Create();
  { IssueTicket dropped = order->Take(); }
  IssueTicket next = order->Take();
  next.AwaitTurn();
}

TEST(IssueOrderTest, MovedFromTicketReleasesNothing) {
  auto order = IssueOrder::Create();
  IssueTicket first = order->Take();
  IssueTicket moved = std::move(first);
  IssueTicket second = order->Take();
  moved.Release();
  second.AwaitTurn();
}

TEST(IssueOrderTest, ManyThreadsRunInIssueOrder) {
  auto order = IssueOrder::Create();
  constexpr int kTickets = 32;
  std::vector<IssueTicket> tickets;
  for (int i = 0; i < kTickets; ++i) tickets.push_back(order->Take());
  std::vector<int> ran;
  std::vector<std::thread> threads;
  // Started in reverse, so any thread that did not wait would run early.
  for (int i = kTickets - 1; i >= 0; --i) {
    threads.emplace_back([&, i] {
      tickets[i].AwaitTurn();
      ran.push_back(i);  // serialized by the order itself
      tickets[i].Release();
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(ran.size(), kTickets);
  for (int i = 0; i < kTickets; ++i) EXPECT_EQ(ran[i], i);
}

TEST(IssuedTicketsTest, RunsTakeTheirTicketsOldestFirst) {
  auto order = IssueOrder::Create();
  IssuedTickets tickets;
  EXPECT_FALSE(tickets.Pop().has_value()) << "a run that was never issued";
  tickets.Push(order->Take());  // replay 1
  IssueTicket eager = order->Take();  // an eager collective between replays
  tickets.Push(order->Take());  // replay 2
  std::optional<IssueTicket> first = tickets.Pop();
  ASSERT_TRUE(first.has_value());
  first->AwaitTurn();  // ticket 0: its turn at once
  first->Release();
  eager.AwaitTurn();
  eager.Release();
  std::optional<IssueTicket> second = tickets.Pop();
  ASSERT_TRUE(second.has_value());
  second->AwaitTurn();  // would block for ever if it were older than `eager`
  second->Release();
  EXPECT_FALSE(tickets.Pop().has_value());
}

TEST(IssuedTicketsTest, UnrunTicketsReleaseTheirTurnsWhenDestroyed) {
  auto order = IssueOrder::Create();
  {
    IssuedTickets tickets;  // e.g. a graph destroyed with replays never run
    tickets.Push(order->Take());
    tickets.Push(order->Take());
  }
  IssueTicket later = order->Take();
  later.AwaitTurn();  // would block for ever if the order were stuck
}

}  // namespace
}  // namespace openreg
