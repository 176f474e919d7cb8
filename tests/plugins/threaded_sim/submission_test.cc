// The structures that hand work to a stream's worker (plugins/threaded_sim:
// submission): the doorbell that wakes a sleeping thread only when it
// sleeps, the counter bell that wakes it only once its target is reached,
// the FIFO of work items that one consumer pops without a lock, and the
// execution slots. A lost wake-up shows up as a
// test that never finishes (Bazel's timeout), not as a timed assertion.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "plugins/threaded_sim/counter_bell.h"
#include "plugins/threaded_sim/doorbell.h"
#include "plugins/threaded_sim/event.h"
#include "plugins/threaded_sim/execution_slots.h"
#include "plugins/threaded_sim/queue_room.h"
#include "plugins/threaded_sim/work_item.h"
#include "plugins/threaded_sim/work_queue.h"

namespace openreg::threaded_sim {
namespace {

constexpr absl::Duration kNoSpin = absl::ZeroDuration();

TEST(DoorbellTest, ReturnsAtOnceWhenAlreadyReady) {
  Doorbell bell;
  EXPECT_TRUE(
      bell.Wait([] { return true; }, kNoSpin, absl::InfiniteDuration()));
  EXPECT_EQ(bell.sleepers(), 0);
}

TEST(DoorbellTest, TimesOutWhenNeverReady) {
  Doorbell bell;
  EXPECT_FALSE(bell.Wait([] { return false; }, absl::Microseconds(10),
                         absl::Milliseconds(5)));
  EXPECT_EQ(bell.sleepers(), 0);
}

TEST(DoorbellTest, RingWakesASleeper) {
  Doorbell bell;
  std::atomic<bool> ready{false};
  std::thread waiter([&] {
    EXPECT_TRUE(bell.Wait([&] { return ready.load(); }, kNoSpin,
                          absl::InfiniteDuration()));
  });
  // Ring only once the waiter really sleeps, to exercise the sleeping path.
  while (bell.sleepers() == 0) std::this_thread::yield();
  ready.store(true);
  bell.Ring();
  waiter.join();
  EXPECT_EQ(bell.sleepers(), 0);
}

TEST(DoorbellTest, RingWakesEverySleeper) {
  Doorbell bell;
  std::atomic<bool> ready{false};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.emplace_back([&] {
      EXPECT_TRUE(bell.Wait([&] { return ready.load(); }, kNoSpin,
                            absl::InfiniteDuration()));
    });
  }
  while (bell.sleepers() < 4) std::this_thread::yield();
  ready.store(true);
  bell.Ring();
  for (std::thread& waiter : waiters) waiter.join();
}

// A consumer waits for each of many counter bumps in turn, sometimes
// spinning and sometimes sleeping, while producers bump and ring: a lost
// wake-up leaves the consumer asleep forever.
TEST(DoorbellTest, NoWakeUpIsLostUnderManyProducers) {
  constexpr int kProducers = 4;
  constexpr uint64_t kBumpsEach = 20000;
  Doorbell bell;
  std::atomic<uint64_t> bumps{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&] {
      for (uint64_t i = 0; i < kBumpsEach; ++i) {
        bumps.fetch_add(1);
        bell.Ring();
        if (i % 64 == 0) std::this_thread::yield();
      }
    });
  }
  uint64_t seen = 0;
  int round = 0;
  while (seen < kProducers * kBumpsEach) {
    const absl::Duration spin =
        (++round % 2 == 0) ? absl::Microseconds(2) : kNoSpin;
    ASSERT_TRUE(bell.Wait([&] { return bumps.load() > seen; }, spin,
                          absl::InfiniteDuration()));
    seen = bumps.load();
  }
  for (std::thread& producer : producers) producer.join();
  EXPECT_EQ(seen, kProducers * kBumpsEach);
}

TEST(DoorbellTest, ReportsHowLongItSlept) {
  Doorbell bell;
  absl::Duration slept = absl::InfiniteDuration();
  EXPECT_TRUE(bell.Wait([] { return true; }, kNoSpin,
                        absl::InfiniteDuration(), &slept));
  EXPECT_EQ(slept, absl::ZeroDuration());
  EXPECT_FALSE(bell.Wait([] { return false; }, kNoSpin,
                         absl::Milliseconds(2), &slept));
  EXPECT_GE(slept, absl::Milliseconds(2));
}

TEST(AdaptiveSpinTest, StopsPollingAfterLongSleepsAndResumesAfterShortOnes) {
  const absl::Duration max = absl::Microseconds(64);
  AdaptiveSpin spin(max);
  EXPECT_EQ(spin.current(), max);
  spin.Record(absl::ZeroDuration());  // came while polling
  EXPECT_EQ(spin.current(), max);
  spin.Record(absl::Milliseconds(1));
  EXPECT_EQ(spin.current(), max / 2);
  spin.Record(absl::Milliseconds(1));
  spin.Record(absl::Milliseconds(1));
  EXPECT_EQ(spin.current(), max / 8);
  spin.Record(absl::Milliseconds(1));
  EXPECT_EQ(spin.current(), absl::ZeroDuration());
  spin.Record(absl::Milliseconds(1));
  EXPECT_EQ(spin.current(), absl::ZeroDuration());
  // Work came soon after it went to sleep: a poll would have caught it.
  spin.Record(absl::Microseconds(10));
  EXPECT_EQ(spin.current(), max);
}

// Advances `counter` to `value` as a stream's worker does: store, then tell
// the bell.
void Advance(std::atomic<uint64_t>& counter, CounterBell& bell,
             uint64_t value) {
  counter.store(value);
  bell.Reached(value);
}

// The bug this bell fixes: a synchronizer waiting for the last of many
// queued items woke after each of them. The waiter counts how often it
// evaluates its condition without having reached its target; a plain
// doorbell rung after every item makes that about one per item.
TEST(CounterBellTest, SleeperWakesOnceItsTargetIsReachedNotPerItem) {
  constexpr uint64_t kTarget = 200;
  CounterBell bell;
  std::atomic<uint64_t> counter{0};
  std::atomic<int> unreached_evaluations{0};
  std::thread waiter([&] {
    EXPECT_TRUE(bell.Wait(
        counter, kTarget,
        [&] {
          unreached_evaluations.fetch_add(1);
          return false;
        },
        kNoSpin));
  });
  while (bell.sleepers() == 0) std::this_thread::yield();
  EXPECT_EQ(bell.lowest_target(), kTarget);
  for (uint64_t i = 1; i < kTarget; ++i) {
    Advance(counter, bell, i);
    // Time for a woken waiter to evaluate and sleep again.
    absl::SleepFor(absl::Microseconds(20));
  }
  Advance(counter, bell, kTarget);
  waiter.join();
  // Before sleeping: once before registering as a sleeper, once after.
  // Anything above that is a wake-up short of the target (CondVar allows a
  // rare spurious one).
  EXPECT_LE(unreached_evaluations.load(), 4);
}

TEST(CounterBellTest, WaitersWithDifferentTargetsEachWakeAtTheirOwn) {
  CounterBell bell;
  std::atomic<uint64_t> counter{0};
  auto never_stopped = [] { return false; };
  std::atomic<bool> near_done{false};
  std::atomic<bool> far_done{false};
  std::thread near([&] {
    EXPECT_TRUE(bell.Wait(counter, 10, never_stopped, kNoSpin));
    near_done.store(true);
  });
  std::thread far([&] {
    EXPECT_TRUE(bell.Wait(counter, 20, never_stopped, kNoSpin));
    far_done.store(true);
  });
  while (bell.sleepers() < 2) std::this_thread::yield();
  EXPECT_EQ(bell.lowest_target(), 10u);
  Advance(counter, bell, 9);
  Advance(counter, bell, 10);
  near.join();
  EXPECT_FALSE(far_done.load());
  // The far waiter woke with the near one and stood for its own target again.
  while (bell.lowest_target() != 20 || bell.sleepers() != 1) {
    std::this_thread::yield();
  }
  Advance(counter, bell, 20);
  far.join();
  EXPECT_TRUE(near_done.load() && far_done.load());
  EXPECT_EQ(bell.sleepers(), 0);
}

TEST(CounterBellTest, RingAllReleasesWaitersThatAreStopped) {
  CounterBell bell;
  std::atomic<uint64_t> counter{0};
  std::atomic<bool> stopped{false};
  std::thread waiter([&] {
    EXPECT_FALSE(
        bell.Wait(counter, 5, [&] { return stopped.load(); }, kNoSpin));
  });
  while (bell.sleepers() == 0) std::this_thread::yield();
  stopped.store(true);
  bell.RingAll();
  waiter.join();
}

// Waiters keep waiting for targets a little ahead of what they saw, some
// polling and some sleeping, while a writer advances the counter one by one:
// a lost wake-up leaves a waiter asleep forever (the test then times out).
TEST(CounterBellTest, NoWakeUpIsLostUnderManyWaiters) {
  constexpr int kWaiters = 4;
  constexpr uint64_t kEnd = 20000;
  CounterBell bell;
  std::atomic<uint64_t> counter{0};
  auto never_stopped = [] { return false; };
  std::vector<std::thread> waiters;
  for (int w = 0; w < kWaiters; ++w) {
    waiters.emplace_back([&, w] {
      uint64_t seen = 0;
      int round = 0;
      while (seen < kEnd) {
        const uint64_t target = std::min(kEnd, seen + 1 + (round % 7) * w);
        const absl::Duration spin =
            (++round % 2 == 0) ? absl::Microseconds(2) : kNoSpin;
        ASSERT_TRUE(bell.Wait(counter, target, never_stopped, spin));
        seen = counter.load();
        ASSERT_GE(seen, target);
      }
    });
  }
  for (uint64_t i = 1; i <= kEnd; ++i) {
    Advance(counter, bell, i);
    if (i % 64 == 0) std::this_thread::yield();
  }
  for (std::thread& waiter : waiters) waiter.join();
}

// A compute item whose closure returns `number` as its status, to check order.
WorkItem Numbered(uint64_t number) {
  WorkItem item = WorkItem::Compute(
      "numbered", [number] { return static_cast<openreg_status>(number); });
  item.version = number;
  return item;
}

TEST(WorkQueueTest, IsFirstInFirstOut) {
  WorkQueue queue(/*nodes_kept=*/64);
  WorkItem item;
  EXPECT_FALSE(queue.TryPop(&item));
  for (uint64_t i = 1; i <= 10; ++i) queue.Push(Numbered(i));
  for (uint64_t i = 1; i <= 10; ++i) {
    ASSERT_TRUE(queue.TryPop(&item));
    EXPECT_EQ(item.version, i);
    EXPECT_EQ(static_cast<uint64_t>(item.compute()), i);
  }
  EXPECT_FALSE(queue.TryPop(&item));
}

TEST(WorkQueueTest, ReusesConsumedNodesInsteadOfAllocating) {
  WorkQueue queue(/*nodes_kept=*/64);
  WorkItem item;
  for (uint64_t round = 0; round < 1000; ++round) {
    queue.Push(Numbered(2 * round));
    queue.Push(Numbered(2 * round + 1));
    ASSERT_TRUE(queue.TryPop(&item));
    ASSERT_TRUE(queue.TryPop(&item));
  }
  // The few nodes allocated before recycling starts (two items would need
  // only three).
  EXPECT_EQ(queue.nodes_allocated(), WorkQueue::kNodesBeforeRecycling);
}

TEST(WorkQueueTest, FreesNodesBeyondTheKeptCountAfterABurst) {
  WorkQueue queue(/*nodes_kept=*/8);
  WorkItem item;
  for (uint64_t i = 0; i < 100; ++i) queue.Push(Numbered(i));
  EXPECT_EQ(queue.nodes_allocated(), 101u);
  while (queue.TryPop(&item)) {
  }
  queue.Push(Numbered(100));
  EXPECT_EQ(queue.nodes_allocated(), 8u);
  ASSERT_TRUE(queue.TryPop(&item));
  EXPECT_EQ(item.version, 100u);
}

TEST(WorkQueueTest, PoppedItemsReleaseWhatTheyHeld) {
  WorkQueue queue(/*nodes_kept=*/64);
  auto event = std::make_shared<Event>(nullptr, 0, 0);
  queue.Push(WorkItem::EventMarker(event, 1));
  EXPECT_EQ(event.use_count(), 2);
  {
    WorkItem item;
    ASSERT_TRUE(queue.TryPop(&item));
    EXPECT_EQ(item.kind, WorkItem::Kind::kEventMarker);
  }
  // The consumed node keeps no reference.
  EXPECT_EQ(event.use_count(), 1);
}

// Items never popped are destroyed with their queue (ASan reports a leak
// otherwise).
TEST(WorkQueueTest, ItemsNeverPoppedDieWithTheQueue) {
  auto event = std::make_shared<Event>(nullptr, 0, 0);
  {
    WorkQueue queue(/*nodes_kept=*/64);
    queue.Push(WorkItem::EventMarker(event, 8));
    queue.Push(WorkItem::Compute("d", [] { return OPENREG_SUCCESS; }));
    EXPECT_EQ(event.use_count(), 2);
  }
  EXPECT_EQ(event.use_count(), 1);
}

// Note [A queue the worker pops without a lock]: producers take turns under
// a mutex of their own, as a stream's user threads do, while one consumer
// pops without any; every item arrives once, each producer's in its order.
// Under --config=tsan a missing release/acquire pair is a reported race.
TEST(WorkQueueTest, ConcurrentProducersAndConsumerLoseNothing) {
  constexpr int kProducers = 3;
  constexpr uint64_t kItemsEach = 30000;
  WorkQueue queue(/*nodes_kept=*/16);
  absl::Mutex producers_mu;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (uint64_t i = 1; i <= kItemsEach; ++i) {
        absl::MutexLock lock(&producers_mu);
        queue.Push(Numbered(p * kItemsEach + i));
      }
    });
  }
  std::vector<uint64_t> last_seen(kProducers, 0);
  uint64_t popped = 0;
  WorkItem item;
  while (popped < kProducers * kItemsEach) {
    if (!queue.TryPop(&item)) {
      std::this_thread::yield();
      continue;
    }
    ++popped;
    const uint64_t producer = (item.version - 1) / kItemsEach;
    const uint64_t number = (item.version - 1) % kItemsEach + 1;
    ASSERT_LT(producer, static_cast<uint64_t>(kProducers));
    ASSERT_EQ(number, last_seen[producer] + 1) << "producer " << producer;
    ASSERT_EQ(static_cast<uint64_t>(item.compute()), item.version);
    last_seen[producer] = number;
  }
  for (std::thread& producer : producers) producer.join();
  EXPECT_FALSE(queue.TryPop(&item));
  // Whatever the consumer's lag made the list grow to, the next push trims
  // the free nodes back to the kept count.
  queue.Push(Numbered(0));
  EXPECT_LE(queue.nodes_allocated(), 16u);
}

// --- Room in a stream's queue (Note [Room counted from two reads]) ---------

TEST(QueueRoomTest, ABacklogBelowTheDepthLeavesRoom) {
  EXPECT_EQ(FinishedCountToWaitFor(/*enqueued=*/10, /*finished=*/0, 256),
            std::nullopt);
  EXPECT_EQ(FinishedCountToWaitFor(300, 45, 256), std::nullopt);
  EXPECT_EQ(FinishedCountToWaitFor(7, 7, 256), std::nullopt);
}

TEST(QueueRoomTest, AFullQueueWaitsUntilHalfOfItHasDrained) {
  EXPECT_EQ(FinishedCountToWaitFor(/*enqueued=*/256, /*finished=*/0, 256),
            128u);
  EXPECT_EQ(FinishedCountToWaitFor(1000, 600, 256), 872u);
  EXPECT_EQ(FinishedCountToWaitFor(5, 1, 4), 3u);
}

// Other producers enqueued, and the worker finished, between the two reads:
// there is room, and above all no target wrapped below zero to wait for
// forever.
TEST(QueueRoomTest, AFinishedCountPastTheEnqueuedCountReadFirstLeavesRoom) {
  EXPECT_EQ(FinishedCountToWaitFor(/*enqueued=*/31, /*finished=*/140, 256),
            std::nullopt);
  EXPECT_EQ(FinishedCountToWaitFor(31, 32, 256), std::nullopt);
  EXPECT_EQ(FinishedCountToWaitFor(0, 1, 2), std::nullopt);
}

// Events complete their versions in any order; event_query and waits of a
// completed version take a lock-free path.
TEST(EventTest, VersionsCompleteInAnyOrder) {
  Event event(nullptr, 0, 0);
  EXPECT_TRUE(event.IsComplete(0));
  const uint64_t first = event.BeginRecord();
  const uint64_t second = event.BeginRecord();
  EXPECT_EQ(event.LatestVersion(), second);
  EXPECT_FALSE(event.IsComplete(first));
  event.CompleteRecord(second);
  EXPECT_TRUE(event.IsComplete(second));
  EXPECT_FALSE(event.IsComplete(first));
  event.CompleteRecord(first);
  EXPECT_TRUE(event.IsComplete(first));
  EXPECT_TRUE(event.AwaitVersion(second));
}

// A stream may hold thousands of markers of one event.
TEST(EventTest, ManyPendingVersionsCompleteInOrder) {
  Event event(nullptr, 0, 0);
  constexpr uint64_t kRecords = 100000;
  for (uint64_t i = 0; i < kRecords; ++i) event.BeginRecord();
  for (uint64_t version = 1; version <= kRecords; ++version) {
    ASSERT_FALSE(event.IsComplete(version));
    event.CompleteRecord(version);
    ASSERT_TRUE(event.IsComplete(version));
  }
}

TEST(EventTest, AwaitVersionWakesWhenTheMarkerRuns) {
  Event event(nullptr, 0, 0);
  const uint64_t version = event.BeginRecord();
  std::thread marker([&] { event.CompleteRecord(version); });
  EXPECT_TRUE(event.AwaitVersion(version));
  marker.join();
}

// Note [Execution slots and stream priorities]: the lock-free take and return
// of an uncontended slot, and the waiting path beside them. The priority
// order is tested through the driver (threaded_sim_test).
TEST(ExecutionSlotsTest, AFreeSlotIsGrantedAtTheRequest) {
  ExecutionSlots slots(1);
  SlotRequest request;
  slots.Request(&request, 0);
  EXPECT_TRUE(slots.AwaitGrant(&request));
  slots.Release();
  // Given back: the next request gets it at once too.
  slots.Request(&request, 0);
  EXPECT_TRUE(slots.AwaitGrant(&request));
  slots.Release();
}

// One slot, held; `waiter` has asked for it, and a thread waits for the
// grant.
class HeldSlotWithAWaiter {
 public:
  HeldSlotWithAWaiter() {
    slots_.Request(&holder_, 0);
    EXPECT_TRUE(slots_.AwaitGrant(&holder_));
    slots_.Request(&waiter_, 0);
    waiting_ = std::thread([this] { granted_ = slots_.AwaitGrant(&waiter_); });
  }
  ~HeldSlotWithAWaiter() {
    if (waiting_.joinable()) waiting_.join();
  }

  ExecutionSlots& slots() { return slots_; }
  // Whether the waiting thread was granted the slot, once it returns.
  bool Granted() {
    waiting_.join();
    return granted_.load();
  }

 private:
  ExecutionSlots slots_{1};
  SlotRequest holder_, waiter_;
  std::atomic<bool> granted_{false};
  std::thread waiting_;
};

TEST(ExecutionSlotsTest, AWaitingRequestGetsTheReleasedSlot) {
  HeldSlotWithAWaiter held;
  held.slots().Release();
  EXPECT_TRUE(held.Granted());
  held.slots().Release();
}

TEST(ExecutionSlotsTest, CancelWakesAWaiterWithoutAGrant) {
  HeldSlotWithAWaiter held;
  held.slots().Cancel();
  EXPECT_FALSE(held.Granted());
  // Nothing is granted after a cancel, even with a slot free.
  held.slots().Release();
  SlotRequest late;
  held.slots().Request(&late, 0);
  EXPECT_FALSE(held.slots().AwaitGrant(&late));
}

// Threads take and give back slots as stream workers do, some with the lock-
// free path, some waiting: never more holders than slots, and no request is
// left waiting (a lost grant hangs the test until Bazel's timeout).
TEST(ExecutionSlotsTest, NeverMoreHoldersThanSlotsUnderContention) {
  for (int32_t count : {1, 2}) {
    ExecutionSlots slots(count);
    std::atomic<int> holders{0};
    std::atomic<int> most{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        SlotRequest request;
        for (int i = 0; i < 2000; ++i) {
          slots.Request(&request, /*priority=*/t % 2);
          ASSERT_TRUE(slots.AwaitGrant(&request));
          const int now = holders.fetch_add(1) + 1;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          holders.fetch_sub(1);
          slots.Release();
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_LE(most.load(), count) << count;
    EXPECT_GE(most.load(), 1) << count;
  }
}

}  // namespace
}  // namespace openreg::threaded_sim
