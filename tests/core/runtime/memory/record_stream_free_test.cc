// Freeing a block that Tensor.record_stream declared used on another stream
// records an event on that stream. On an asynchronous driver a record onto a
// full stream waits until the stream has made room; the pool must not hold
// its lock meanwhile, since the work the stream runs to make room may
// allocate from the pool (the fallback's kernels do).
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
    ASSERT_TRUE(driver->LaunchHostFunc(full->get(), &AllocatingWork::Run,
                                       &work)
                    .ok());
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(driver
                      ->LaunchHostFunc(
                          full->get(), [](void*) { return OPENREG_SUCCESS; },
                          nullptr)
                      .ok());
    }
    // The free's record waits for room; give it time to start waiting.
    std::future<void> freed = std::async(std::launch::async,
                                         [&] { pool.Free(*block); });
    absl::SleepFor(absl::Milliseconds(100));
    busy.Release();
    if (freed.wait_for(std::chrono::seconds(10)) !=
        std::future_status::ready) {
      // A deadlock cannot be undone: report it and stop, instead of hanging.
      ADD_FAILURE() << "the free and the stream's work wait for each other: "
                       "the pool held its lock while the event record "
                       "waited for room on the stream";
      std::fflush(nullptr);
      std::_Exit(1);
    }
  }
  EXPECT_TRUE(work.done.HasBeenNotified());
  ASSERT_TRUE(driver->StreamSynchronize(full->get()).ok());
  // Once the record's event has fired, the block is free again.
  EXPECT_TRUE(pool.EmptyCache().ok());
  EXPECT_EQ(pool.stats().reserved_bytes[StatPool::kAll].current, 0);
}

}  // namespace
}  // namespace openreg
