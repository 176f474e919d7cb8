// The pinned host caching allocator on both shipped drivers.
#include "core/runtime/memory/pinned_memory_pool.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "tests/core/runtime/memory/memory_test_driver.h"

namespace openreg {
namespace {

using ::openreg::testing::LoadTestDriver;

class PinnedMemoryPoolTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    driver_ = LoadTestDriver(GetParam(), uint64_t{64} << 20);
    ASSERT_NE(driver_, nullptr);
    pool_ = std::make_unique<PinnedMemoryPool>(*driver_);
  }
  void TearDown() override { pool_.reset(); }

  void* Allocate(size_t size) {
    absl::StatusOr<void*> ptr = pool_->Allocate(size);
    EXPECT_TRUE(ptr.ok()) << ptr.status();
    return ptr.value_or(nullptr);
  }

  std::unique_ptr<Driver> driver_;
  std::unique_ptr<PinnedMemoryPool> pool_;
};

TEST_P(PinnedMemoryPoolTest, RoundsToPowersOfTwoAndReuses) {
  void* a = Allocate(1000);  // a 1024-byte block
  HostMemoryStats stats = pool_->stats();
  EXPECT_EQ(stats.active_bytes.current, 1024);
  EXPECT_EQ(stats.allocated_bytes.current, 1024);
  EXPECT_EQ(stats.num_host_alloc, 1);
  ASSERT_TRUE(pool_->Free(a));
  EXPECT_EQ(pool_->stats().active_requests.current, 0);
  EXPECT_EQ(pool_->stats().allocations.current, 1);  // cached
  EXPECT_EQ(Allocate(700), a);  // same bucket: reused
  EXPECT_NE(Allocate(2000), a);
  EXPECT_EQ(pool_->stats().num_host_alloc, 2);
  EXPECT_EQ(driver_->GetPointerAttributes(a).value().memory_type,
            OPENREG_MEMORY_TYPE_HOST);
}

TEST_P(PinnedMemoryPoolTest, FreeOfUnknownPointerIsRefused) {
  int not_pinned = 0;
  EXPECT_FALSE(pool_->Free(&not_pinned));
  void* a = Allocate(10);
  ASSERT_TRUE(pool_->Free(a));
  EXPECT_FALSE(pool_->Free(a));  // twice
}

TEST_P(PinnedMemoryPoolTest, EmptyCacheReturnsCachedBlocks) {
  void* kept = Allocate(4096);
  ASSERT_TRUE(pool_->Free(Allocate(8192)));
  ASSERT_TRUE(pool_->EmptyCache().ok());
  const HostMemoryStats stats = pool_->stats();
  EXPECT_EQ(stats.num_host_free, 1);
  EXPECT_EQ(stats.allocated_bytes.current, 4096);
  EXPECT_EQ(stats.allocated_bytes.peak, 4096 + 8192);
  ASSERT_TRUE(pool_->Free(kept));
}

TEST_P(PinnedMemoryPoolTest, RecordedEventDelaysReuse) {
  if (GetParam() == ::openreg::testing::kCpuSimPath) {
    GTEST_SKIP() << "cpu_sim runs host functions on the launching thread";
  }
  absl::StatusOr<DriverStream> stream = driver_->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok());
  void* staging = Allocate(4096);
  {
    ::openreg::testing::StreamBlocker busy(*driver_, stream->get());
    // A copy out of `staging` queued behind the blocker.
    ASSERT_TRUE(pool_->RecordEvent(staging, 0, stream->get()));
    ASSERT_TRUE(pool_->Free(staging));
    EXPECT_NE(Allocate(4096), staging);
  }
  ASSERT_TRUE(driver_->StreamSynchronize(stream->get()).ok());
  EXPECT_EQ(Allocate(4096), staging);
}

TEST_P(PinnedMemoryPoolTest, UntrackableStreamUseRetiresTheBlock) {
  // No event can be recorded on a destroyed stream: the block must never be
  // handed out again.
  openreg_stream gone = nullptr;
  {
    absl::StatusOr<DriverStream> stream = driver_->CreateStream(0, 0);
    ASSERT_TRUE(stream.ok());
    gone = stream->get();
  }  // destroyed with its DriverStream
  void* staging = Allocate(4096);
  ASSERT_TRUE(pool_->RecordEvent(staging, 0, gone));
  ASSERT_TRUE(pool_->Free(staging));
  EXPECT_NE(Allocate(4096), staging);
  EXPECT_EQ(pool_->stats().active_requests.current, 1);
}

TEST_P(PinnedMemoryPoolTest, AFailedRecordIsMadeGoodWhenTheBlockIsFreed) {
  // The first event_record fails (an injected fault); the block is still
  // reused, and given back by EmptyCache, once a later record on the stream
  // has fired.
  DriverConfig config;
  config.device_count = 1;
  config.device_memory_bytes = uint64_t{64} << 20;
  config.options = "fault_points=event_record,fault_on_call=1";
  absl::StatusOr<std::unique_ptr<Driver>> faulty =
      Driver::Load(GetParam(), config);
  ASSERT_TRUE(faulty.ok()) << faulty.status();
  PinnedMemoryPool pool(**faulty);
  absl::StatusOr<DriverStream> stream = (*faulty)->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok());
  absl::StatusOr<void*> staging = pool.Allocate(4096);
  ASSERT_TRUE(staging.ok());
  ASSERT_TRUE(pool.RecordEvent(*staging, 0, stream->get()));
  ASSERT_TRUE(pool.Free(*staging));
  ASSERT_TRUE((*faulty)->StreamSynchronize(stream->get()).ok());
  absl::StatusOr<void*> again = pool.Allocate(4096);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *staging);
  ASSERT_TRUE(pool.Free(*again));
  ASSERT_TRUE(pool.EmptyCache().ok());
  EXPECT_EQ(pool.stats().allocated_bytes.current, 0);
  EXPECT_EQ(pool.stats().active_requests.current, 0);
}

INSTANTIATE_TEST_SUITE_P(Drivers, PinnedMemoryPoolTest,
                         ::openreg::testing::ShippedDriverPaths(),
                         ::openreg::testing::DriverName);

}  // namespace
}  // namespace openreg
