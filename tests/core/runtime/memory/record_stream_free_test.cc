// Freeing a block that Tensor.record_stream declared used on another stream
// records an event on that stream. On an asynchronous driver a record onto a
// full stream waits until the stream has made room; the pool must not hold
// its lock meanwhile, since the work the stream runs to make room may
// allocate from the pool (the fallback's kernels do). The same holds for
// the record made again after one failed.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/runtime/memory/device_memory_pool.h"
#include "gtest/gtest.h"
#include "tests/core/runtime/memory/memory_test_driver.h"

namespace openreg {
namespace {

constexpr uint64_t kCapacity = 64 << 20;
constexpr size_t kSize = 4096;

void NoReclaim() {}

// A host function that allocates from the pool and frees, as a kernel
// running inside work does.
struct AllocatingWork {
  DeviceMemoryPool* pool = nullptr;
  absl::Notification done;

  static openreg_status Run(void* self) {
    auto* work = static_cast<AllocatingWork*>(self);
    absl::StatusOr<Block*> block = work->pool->Allocate(kSize, NoReclaim);
    if (block.ok()) work->pool->Free(*block);
    work->done.Notify();
    return block.ok() ? OPENREG_SUCCESS : OPENREG_ERROR_INTERNAL;
  }
};

// Fills a stream of depth 4 that a blocker holds: `work`, which allocates,
// then two more items, so that a record onto it waits until the blocker and
// `work` have run.
void QueueBehindTheBlocker(const Driver& driver, openreg_stream stream,
                           AllocatingWork& work) {
  ASSERT_TRUE(driver.LaunchHostFunc(stream, &AllocatingWork::Run, &work).ok());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(driver
                    .LaunchHostFunc(
                        stream, [](void*) { return OPENREG_SUCCESS; }, nullptr)
                    .ok());
  }
}

// Waits up to 10 s for `done`; a deadlock cannot be undone, so on timeout
// reports it and stops the test binary instead of hanging.
void ExpectNoDeadlock(std::future<void>& done, const char* what) {
  if (done.wait_for(std::chrono::seconds(10)) == std::future_status::ready) {
    return;
  }
  ADD_FAILURE() << what;
  std::fflush(nullptr);
  std::_Exit(1);
}

TEST(RecordStreamFreeTest, AFreeWaitingForRoomOnAFullStreamHoldsNoLock) {
  // A stream of 4 items: a blocker, the allocating work, two more; a record
  // onto it waits until half of it (the blocker and the work) has run.
  std::unique_ptr<Driver> driver = ::openreg::testing::LoadTestDriver(
      ::openreg::testing::kThreadedSimPath, kCapacity, 1, "queue_depth=4");
  ASSERT_NE(driver, nullptr);
  MemoryHistory history;
  DeviceMemoryPool pool(*driver, 0, AllocatorConfig(), history);
  absl::StatusOr<DriverStream> user = driver->CreateStream(0, 0);
  absl::StatusOr<DriverStream> full = driver->CreateStream(0, 0);
  ASSERT_TRUE(user.ok() && full.ok());

  absl::StatusOr<Block*> block = pool.Allocate(kSize, NoReclaim, user->get());
  ASSERT_TRUE(block.ok());
  pool.RecordStream(*block, full->get());

  AllocatingWork work{&pool};
  {
    ::openreg::testing::StreamBlocker busy(*driver, full->get());
    QueueBehindTheBlocker(*driver, full->get(), work);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    // The free's record waits for room; give it time to start waiting.
    std::future<void> freed = std::async(std::launch::async,
                                         [&] { pool.Free(*block); });
    absl::SleepFor(absl::Milliseconds(100));
    busy.Release();
    ExpectNoDeadlock(freed,
                     "the free and the stream's work wait for each other: "
                     "the pool held its lock while the event record waited "
                     "for room on the stream");
  }
  EXPECT_TRUE(work.done.HasBeenNotified());
  ASSERT_TRUE(driver->StreamSynchronize(full->get()).ok());
  // Once the record's event has fired, the block is free again.
  EXPECT_TRUE(pool.EmptyCache().ok());
  EXPECT_EQ(pool.stats().reserved_bytes[StatPool::kAll].current, 0);
}

TEST(RecordStreamFreeTest, ARecordMadeAgainAfterAFaultHoldsNoLock) {
  // The free's record fails (an injected fault), so the block waits,
  // untracked, for a record made again at the pool's next miss; that record
  // goes onto a full stream whose queued work allocates.
  std::unique_ptr<Driver> driver = ::openreg::testing::LoadTestDriver(
      ::openreg::testing::kThreadedSimPath, kCapacity, 1,
      "queue_depth=4,fault_points=event_record,fault_on_call=1");
  ASSERT_NE(driver, nullptr);
  MemoryHistory history;
  DeviceMemoryPool pool(*driver, 0, AllocatorConfig(), history);
  absl::StatusOr<DriverStream> full = driver->CreateStream(0, 0);
  ASSERT_TRUE(full.ok());

  absl::StatusOr<Block*> block = pool.Allocate(kSize, NoReclaim);
  ASSERT_TRUE(block.ok());
  pool.RecordStream(*block, full->get());
  pool.Free(*block);  // the record fails
  ASSERT_EQ(pool.stats().active[StatPool::kAll].current, 1);

  AllocatingWork work{&pool};
  absl::StatusOr<Block*> large;
  {
    ::openreg::testing::StreamBlocker busy(*driver, full->get());
    QueueBehindTheBlocker(*driver, full->get(), work);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    // A large request misses, so the pool records again: onto the full
    // stream, where it waits for room.
    std::future<void> allocated = std::async(std::launch::async, [&] {
      large = pool.Allocate(size_t{4} << 20, NoReclaim);
    });
    absl::SleepFor(absl::Milliseconds(100));
    busy.Release();
    ExpectNoDeadlock(allocated,
                     "the allocation and the stream's work wait for each "
                     "other: the pool held its lock while the record made "
                     "again waited for room on the stream");
  }
  ASSERT_TRUE(large.ok()) << large.status();
  EXPECT_TRUE(work.done.HasBeenNotified());
  pool.Free(*large);
  // Once the record made again has fired, the block is free again.
  EXPECT_TRUE(pool.EmptyCache().ok());
  const DeviceMemoryStats stats = pool.stats();
  EXPECT_EQ(stats.active[StatPool::kAll].current, 0);
  EXPECT_EQ(stats.reserved_bytes[StatPool::kAll].current, 0);
}

}  // namespace
}  // namespace openreg
