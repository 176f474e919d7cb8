// core/runtime/handback_stack.h: every item pushed is taken exactly once,
// with what its pusher wrote before pushing it, however pushes and takes
// interleave across threads (run it under --config=tsan too).
#include "core/runtime/handback_stack.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace openreg {
namespace {

struct Item {
  int payload = 0;  // written by the pusher before Push, read by the taker
  int taken = 0;
  Item* next = nullptr;
};

using Stack = HandbackStack<Item, &Item::next>;

std::vector<int> PayloadsOf(Item* head) {
  std::vector<int> payloads;
  for (Item* item = head; item != nullptr; item = item->next) {
    payloads.push_back(item->payload);
  }
  return payloads;
}

TEST(HandbackStackTest, AnEmptyStackTakesNothing) {
  Stack stack;
  EXPECT_EQ(stack.TakeAll(), nullptr);
}

TEST(HandbackStackTest, TakesEverythingPushedNewestFirstAndEmpties) {
  Stack stack;
  Item items[3];
  for (int i = 0; i < 3; ++i) {
    items[i].payload = i + 1;
    stack.Push(&items[i]);
  }
  EXPECT_THAT(PayloadsOf(stack.TakeAll()), testing::ElementsAre(3, 2, 1));
  EXPECT_EQ(stack.TakeAll(), nullptr);
  // Pushed again after a take, an item starts a new list.
  stack.Push(&items[1]);
  EXPECT_THAT(PayloadsOf(stack.TakeAll()), testing::ElementsAre(2));
}

TEST(HandbackStackTest, ConcurrentPushersAndATakerLoseAndRepeatNothing) {
  constexpr int kPushers = 4;
  constexpr int kItemsPerPusher = 20000;
  std::vector<Item> items(kPushers * kItemsPerPusher);
  Stack stack;
  std::atomic<int> pushed{0};
  std::vector<std::thread> pushers;
  for (int p = 0; p < kPushers; ++p) {
    pushers.emplace_back([&, p] {
      for (int i = 0; i < kItemsPerPusher; ++i) {
        Item& item = items[p * kItemsPerPusher + i];
        item.payload = p * kItemsPerPusher + i + 1;
        stack.Push(&item);
        pushed.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  int taken = 0;
  int mismatched_payloads = 0;
  auto take = [&] {
    for (Item* item = stack.TakeAll(); item != nullptr;) {
      Item* next = item->next;
      ++item->taken;
      if (item->payload != static_cast<int>(item - items.data()) + 1) {
        ++mismatched_payloads;
      }
      ++taken;
      item = next;
    }
  };
  while (pushed.load(std::memory_order_relaxed) < kPushers * kItemsPerPusher) {
    take();
  }
  for (std::thread& pusher : pushers) pusher.join();
  take();
  EXPECT_EQ(taken, kPushers * kItemsPerPusher);
  EXPECT_EQ(mismatched_payloads, 0);
  int taken_other_than_once = 0;
  for (const Item& item : items) taken_other_than_once += item.taken != 1;
  EXPECT_EQ(taken_other_than_once, 0);
}

}  // namespace
}  // namespace openreg
