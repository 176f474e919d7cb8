// The device caching allocator's behaviour, byte-exact, on both shipped
// drivers: rounding, pools, splitting, reuse before merging, merging,
// statistics, the cache, out of memory, max_split_size, and reuse after
// record_stream.
#include "core/runtime/memory/device_memory_pool.h"

#include <memory>
#include <string>
#include <vector>

#include "core/runtime/memory/size_classes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/runtime/memory/memory_test_driver.h"

namespace openreg {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::openreg::testing::LoadTestDriver;

constexpr size_t kMiB = size_t{1} << 20;
constexpr uint64_t kCapacity = 64 * kMiB;

void NoReclaim() {}

int64_t Current(const PoolStats& stats, StatPool pool = StatPool::kAll) {
  return stats[pool].current;
}

class DeviceMemoryPoolTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { MakePool(AllocatorConfig()); }

  void MakePool(const AllocatorConfig& config) {
    pool_.reset();
    driver_.reset();
    driver_ = LoadTestDriver(GetParam(), kCapacity);
    ASSERT_NE(driver_, nullptr);
    pool_ = std::make_unique<DeviceMemoryPool>(*driver_, 0, config, history_);
  }

  Block* Allocate(size_t size) {
    absl::StatusOr<Block*> block = pool_->Allocate(size, NoReclaim);
    EXPECT_TRUE(block.ok()) << block.status();
    return block.value_or(nullptr);
  }

  uint64_t DriverFreeBytes() {
    return driver_->MemGetInfo(0).value().free_bytes;
  }

  std::unique_ptr<Driver> driver_;
  MemoryHistory history_;  // off: these tests are about the pool alone
  std::unique_ptr<DeviceMemoryPool> pool_;
};

TEST_P(DeviceMemoryPoolTest, SmallRequestsShareOneSegment) {
  Block* a = Allocate(1);
  Block* b = Allocate(1000);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->size, kMinBlockSize);
  EXPECT_EQ(b->size, 1024u);
  EXPECT_EQ(b->begin(), a->begin() + kMinBlockSize);  // carved from one segment
  const DeviceMemoryStats stats = pool_->stats();
  EXPECT_EQ(stats.num_device_alloc, 1);
  EXPECT_EQ(Current(stats.segment, StatPool::kSmall), 1);
  EXPECT_EQ(Current(stats.reserved_bytes), int64_t{kSmallSegmentSize});
  EXPECT_EQ(Current(stats.allocation), 2);
  EXPECT_EQ(Current(stats.allocated_bytes), 512 + 1024);
  EXPECT_EQ(Current(stats.requested_bytes), 1 + 1000);
  EXPECT_EQ(Current(stats.active_bytes), 512 + 1024);
  // The rest of the segment is one free split block.
  EXPECT_EQ(Current(stats.inactive_split), 1);
  EXPECT_EQ(Current(stats.inactive_split_bytes),
            int64_t{kSmallSegmentSize} - 512 - 1024);
  EXPECT_EQ(Current(stats.allocated_bytes, StatPool::kLarge), 0);
  pool_->Free(a);
  pool_->Free(b);
}

TEST_P(DeviceMemoryPoolTest, AFreedSmallBlockIsReusedWholeForItsSize) {
  Block* a = Allocate(512);
  Block* b = Allocate(512);
  void* address = a->ptr;
  pool_->Free(a);
  // Kept whole, not merged (Note [Reuse before merge]): a and the tail.
  DeviceMemoryStats stats = pool_->stats();
  EXPECT_EQ(Current(stats.inactive_split), 2);
  EXPECT_EQ(Current(stats.inactive_split_bytes),
            int64_t{kSmallSegmentSize} - 512);
  EXPECT_EQ(Current(stats.active), 1);
  EXPECT_EQ(Current(stats.allocated_bytes), 512);
  Block* again = Allocate(500);
  EXPECT_EQ(again->ptr, address);
  EXPECT_EQ(again->size, 512u);
  stats = pool_->stats();
  EXPECT_EQ(Current(stats.inactive_split), 1);  // the tail
  EXPECT_EQ(Current(stats.requested_bytes), 512 + 500);
  EXPECT_EQ(stats.num_device_alloc, 1);
  pool_->Free(again);
  pool_->Free(b);
}

TEST_P(DeviceMemoryPoolTest, UnmergedNeighboursMergeBeforeANewSegment) {
  // Fill one small segment: [a 512][b 512][c 1 MiB - 512][d 1 MiB - 512].
  Block* a = Allocate(512);
  Block* b = Allocate(512);
  Block* c = Allocate(kSmallRequestLimit - 512);
  Block* d = Allocate(kSmallRequestLimit - 512);
  EXPECT_EQ(d->begin() + d->size, a->begin() + kSmallSegmentSize);
  EXPECT_EQ(Current(pool_->stats().inactive_split), 0);
  void* address = a->ptr;
  pool_->Free(a);
  pool_->Free(b);
  // Counted as merged (Note [Free memory counted as merged]): one run.
  EXPECT_EQ(Current(pool_->stats().inactive_split), 1);
  EXPECT_EQ(Current(pool_->stats().inactive_split_bytes), 1024);
  // No list holds 1 KiB and no free block fits, so a and b merge and serve
  // it, where a new segment would be the alternative.
  Block* merged = Allocate(1024);
  EXPECT_EQ(merged->ptr, address);
  DeviceMemoryStats stats = pool_->stats();
  EXPECT_EQ(stats.num_device_alloc, 1);
  EXPECT_EQ(Current(stats.inactive_split), 0);
  pool_->Free(merged);
  pool_->Free(c);
  pool_->Free(d);
  // Everything merges back into the whole segment, which a request bigger
  // than any one freed block takes without the driver.
  Block* whole = Allocate(kSmallRequestLimit);
  stats = pool_->stats();
  EXPECT_EQ(stats.num_device_alloc, 1);
  EXPECT_EQ(whole->ptr, address);
  pool_->Free(whole);
  stats = pool_->stats();
  EXPECT_EQ(Current(stats.allocation), 0);
  EXPECT_EQ(Current(stats.active), 0);
  EXPECT_EQ(Current(stats.requested_bytes), 0);
  EXPECT_EQ(Current(stats.reserved_bytes), int64_t{kSmallSegmentSize});
}

TEST_P(DeviceMemoryPoolTest, EmptyCacheMergesAndReturnsUnmergedBlocks) {
  Block* a = Allocate(512);
  Block* b = Allocate(1024);
  pool_->Free(a);
  pool_->Free(b);
  // a, b and the tail are unmerged, yet counted as the whole free segment
  // they merge into: no split block.
  EXPECT_EQ(Current(pool_->stats().inactive_split), 0);
  EXPECT_EQ(Current(pool_->stats().inactive_split_bytes), 0);
  ASSERT_TRUE(pool_->EmptyCache().ok());
  const DeviceMemoryStats stats = pool_->stats();
  EXPECT_EQ(Current(stats.inactive_split), 0);
  EXPECT_EQ(Current(stats.inactive_split_bytes), 0);
  EXPECT_EQ(Current(stats.reserved_bytes), 0);
  EXPECT_EQ(stats.num_device_free, 1);
  EXPECT_EQ(DriverFreeBytes(), kCapacity);
}

TEST_P(DeviceMemoryPoolTest, CacheHitReusesTheBlockWithoutTheDriver) {
  Block* first = Allocate(3000);
  void* address = first->ptr;
  pool_->Free(first);
  Block* second = Allocate(3000);
  EXPECT_EQ(second->ptr, address);
  const DeviceMemoryStats stats = pool_->stats();
  EXPECT_EQ(stats.num_device_alloc, 1);
  EXPECT_EQ(stats.allocation[StatPool::kAll].allocated, 2);
  EXPECT_EQ(stats.allocation[StatPool::kAll].freed, 1);
  pool_->Free(second);
}

TEST_P(DeviceMemoryPoolTest, AFreedLargeBlockIsReusedWholeForItsSize) {
  // One 20 MiB segment, full: [a 4 MiB][b 4 MiB][c 4 MiB][d 8 MiB].
  Block* a = Allocate(4 * kMiB);
  Block* b = Allocate(4 * kMiB);
  Block* c = Allocate(4 * kMiB);
  Block* d = Allocate(8 * kMiB);
  ASSERT_EQ(b->begin(), a->begin() + 4 * kMiB);
  ASSERT_EQ(c->begin(), b->begin() + 4 * kMiB);
  ASSERT_EQ(d->begin(), c->begin() + 4 * kMiB);
  Block* b_object = b;
  pool_->Free(b);
  // Kept whole (Note [Reuse before merge]): the same block serves the same
  // size again, with no split.
  Block* again = Allocate(4 * kMiB);
  EXPECT_EQ(again, b_object);
  EXPECT_EQ(again->size, 4 * kMiB);
  EXPECT_EQ(again->next, c);
  pool_->Free(again);
  pool_->Free(a);
  // No list holds 8 MiB: a and b merge to serve it, not a new segment.
  Block* merged = Allocate(8 * kMiB);
  EXPECT_EQ(merged->begin(), a->begin());
  EXPECT_EQ(pool_->stats().num_device_alloc, 1);
  pool_->Free(merged);
  pool_->Free(c);
  pool_->Free(d);
}

TEST_P(DeviceMemoryPoolTest, StatisticsCountUnmergedFreeBlocksAsMerged) {
  // One 20 MiB segment: [a 4 MiB][b 4 MiB][c 4 MiB][d 4 MiB][tail 4 MiB].
  Block* a = Allocate(4 * kMiB);
  Block* b = Allocate(4 * kMiB);
  Block* c = Allocate(4 * kMiB);
  Block* d = Allocate(4 * kMiB);
  const auto expect_inactive_split = [this](int64_t runs, size_t bytes) {
    const DeviceMemoryStats stats = pool_->stats();
    EXPECT_EQ(Current(stats.inactive_split, StatPool::kLarge), runs);
    EXPECT_EQ(Current(stats.inactive_split_bytes, StatPool::kLarge),
              static_cast<int64_t>(bytes));
  };
  expect_inactive_split(1, 4 * kMiB);  // the tail
  pool_->Free(a);
  expect_inactive_split(2, 8 * kMiB);  // a, the tail
  pool_->Free(c);
  expect_inactive_split(3, 12 * kMiB);
  // b joins a and c into one run, as a merge would.
  pool_->Free(b);
  expect_inactive_split(2, 16 * kMiB);
  // The segment wholly free is one unsplit block once merged.
  pool_->Free(d);
  expect_inactive_split(0, 0);
  EXPECT_EQ(pool_->stats().inactive_split[StatPool::kLarge].peak, 3);
  // Taking d back (the last 4 MiB block freed) splits the run again.
  Block* again = Allocate(4 * kMiB);
  EXPECT_EQ(again, d);  // the same block object, kept whole
  expect_inactive_split(2, 16 * kMiB);
  // A snapshot shows each run as one inactive block.
  std::vector<SegmentSnapshot> segments;
  pool_->Snapshot(segments);
  ASSERT_EQ(segments.size(), 1u);
  ASSERT_EQ(segments[0].blocks.size(), 3u);
  EXPECT_EQ(segments[0].blocks[0].state, BlockState::kFree);
  EXPECT_EQ(segments[0].blocks[1].state, BlockState::kAllocated);
  EXPECT_EQ(segments[0].blocks[1].address,
            reinterpret_cast<uintptr_t>(again->ptr));
  EXPECT_EQ(segments[0].blocks[2].state, BlockState::kFree);
  EXPECT_EQ(segments[0].blocks[0].size + segments[0].blocks[2].size,
            16 * kMiB);
  EXPECT_EQ(segments[0].active_size, 4 * kMiB);
  pool_->Free(again);
  expect_inactive_split(0, 0);
}

TEST_P(DeviceMemoryPoolTest, LargeRequestsGetLargeSegments) {
  // 10 MiB or more: a segment of its own, rounded to 2 MiB (14 MiB), whose
  // tail of 2 MiB - 512 bytes is worth splitting off (more than 1 MiB).
  Block* big = Allocate(12 * kMiB + 1);
  // Under 10 MiB: the tail is too small, so a shared 20 MiB segment.
  Block* medium = Allocate(5 * kMiB);
  const DeviceMemoryStats stats = pool_->stats();
  EXPECT_EQ(big->size, 12 * kMiB + 512);
  EXPECT_EQ(medium->size, 5 * kMiB);
  EXPECT_EQ(Current(stats.reserved_bytes, StatPool::kLarge),
            int64_t{kLargeSegmentSize + 14 * kMiB});
  EXPECT_EQ(Current(stats.segment, StatPool::kLarge), 2);
  EXPECT_EQ(Current(stats.segment, StatPool::kSmall), 0);
  EXPECT_EQ(Current(stats.inactive_split_bytes, StatPool::kLarge),
            int64_t{(2 * kMiB - 512) + 15 * kMiB});
  EXPECT_EQ(Current(stats.requested_bytes), int64_t{17 * kMiB + 1});
  // A request that fits the first segment's tail takes it.
  Block* tail = Allocate(kMiB + 4096);
  EXPECT_EQ(tail->begin(), big->begin() + big->size);
  EXPECT_EQ(pool_->stats().num_device_alloc, 2);
  pool_->Free(medium);
  pool_->Free(big);
  pool_->Free(tail);
}

TEST_P(DeviceMemoryPoolTest, EmptyCacheReturnsEverySegment) {
  const uint64_t free_before = DriverFreeBytes();
  Block* small = Allocate(100);
  Block* large = Allocate(3 * kMiB);
  Block* kept = Allocate(200);
  pool_->Free(small);
  pool_->Free(large);
  ASSERT_TRUE(pool_->EmptyCache().ok());
  DeviceMemoryStats stats = pool_->stats();
  // The small segment still holds `kept`; the large one went back.
  EXPECT_EQ(Current(stats.reserved_bytes), int64_t{kSmallSegmentSize});
  EXPECT_EQ(stats.num_device_free, 1);
  pool_->Free(kept);
  ASSERT_TRUE(pool_->EmptyCache().ok());
  stats = pool_->stats();
  EXPECT_EQ(Current(stats.reserved_bytes), 0);
  EXPECT_EQ(Current(stats.segment), 0);
  EXPECT_EQ(stats.num_device_free, 2);
  EXPECT_EQ(DriverFreeBytes(), free_before);
}

TEST_P(DeviceMemoryPoolTest, PeakAndAccumulatedResets) {
  Block* a = Allocate(4096);
  Block* b = Allocate(4096);
  pool_->Free(a);
  DeviceMemoryStats stats = pool_->stats();
  EXPECT_EQ(stats.allocated_bytes[StatPool::kAll].peak, 8192);
  EXPECT_EQ(Current(stats.allocated_bytes), 4096);
  pool_->ResetPeakStats();
  EXPECT_EQ(pool_->stats().allocated_bytes[StatPool::kAll].peak, 4096);
  pool_->ResetAccumulatedStats();
  stats = pool_->stats();
  EXPECT_EQ(stats.allocated_bytes[StatPool::kAll].allocated, 0);
  EXPECT_EQ(stats.allocated_bytes[StatPool::kAll].freed, 0);
  EXPECT_EQ(stats.num_device_alloc, 0);
  EXPECT_EQ(Current(stats.allocated_bytes), 4096);  // current is kept
  pool_->Free(b);
  EXPECT_EQ(pool_->stats().allocated_bytes[StatPool::kAll].freed, 4096);
}

TEST_P(DeviceMemoryPoolTest, ReleasesTheCacheBeforeGivingUp) {
  // 40 MiB cached in one segment; 50 MiB fits only once it is returned.
  pool_->Free(Allocate(40 * kMiB));
  Block* fits = Allocate(50 * kMiB);
  ASSERT_NE(fits, nullptr);
  const DeviceMemoryStats stats = pool_->stats();
  EXPECT_EQ(stats.num_alloc_retries, 1);
  EXPECT_EQ(stats.num_device_free, 1);
  EXPECT_EQ(stats.num_ooms, 0);
  pool_->Free(fits);
}

TEST_P(DeviceMemoryPoolTest, OutOfMemoryNamesEverythingAndPoolKeepsWorking) {
  Block* held = Allocate(5 * kMiB);  // in a 20 MiB segment
  int reclaims = 0;
  absl::StatusOr<Block*> too_big =
      pool_->Allocate(100 * kMiB, [&] { ++reclaims; });
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(
      std::string(too_big.status().message()),
      AllOf(HasSubstr("out of memory on device openreg:0"),
            HasSubstr("tried to allocate 100.00 MiB (104857600 bytes)"),
            HasSubstr("capacity of 64.00 MiB"),
            HasSubstr("5.00 MiB (5242880 bytes) allocated"),
            HasSubstr("20.00 MiB (20971520 bytes) reserved"),
            HasSubstr("OPENREG_DEVICE_MEMORY"),
            HasSubstr("max_split_size_mb")));
  EXPECT_EQ(reclaims, 1);
  DeviceMemoryStats stats = pool_->stats();
  EXPECT_EQ(stats.num_ooms, 1);
  EXPECT_EQ(stats.num_sync_all_streams, 1);
  EXPECT_EQ(Current(stats.allocated_bytes), int64_t{5 * kMiB});
  Block* after = Allocate(kMiB);
  EXPECT_NE(after, nullptr);
  pool_->Free(after);
  pool_->Free(held);
}

TEST_P(DeviceMemoryPoolTest, ReclaimFreesMemoryForTheRetry) {
  Block* queued_work_memory = Allocate(60 * kMiB);
  ASSERT_TRUE(pool_->EmptyCache().ok());
  absl::StatusOr<Block*> block = pool_->Allocate(30 * kMiB, [&] {
    pool_->Free(queued_work_memory);  // what finishing queued work does
    ASSERT_TRUE(pool_->EmptyCache().ok());
  });
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_EQ(pool_->stats().num_ooms, 0);
  pool_->Free(*block);
}

TEST_P(DeviceMemoryPoolTest, MaxSplitSizeKeepsOversizeBlocksWhole) {
  AllocatorConfig config;
  config.max_split_size = 25 * kMiB;
  MakePool(config);
  Block* oversize = Allocate(30 * kMiB);
  EXPECT_EQ(pool_->stats().oversize_allocations.current, 1);
  EXPECT_EQ(pool_->stats().max_split_size, int64_t{25 * kMiB});
  void* oversize_address = oversize->ptr;
  pool_->Free(oversize);
  // A smaller large request does not carve up the cached 30 MiB block...
  Block* medium = Allocate(2 * kMiB);
  EXPECT_NE(medium->ptr, oversize_address);
  EXPECT_EQ(pool_->stats().num_device_alloc, 2);
  // ...which stays whole for the next oversize request.
  Block* again = Allocate(29 * kMiB);
  EXPECT_EQ(again->ptr, oversize_address);
  EXPECT_EQ(again->size, 30 * kMiB);
  EXPECT_EQ(pool_->stats().oversize_segments.current, 1);
  pool_->Free(medium);
  pool_->Free(again);
}

TEST_P(DeviceMemoryPoolTest, RecordedStreamDelaysReuseUntilItCatchesUp) {
  if (GetParam() == ::openreg::testing::kCpuSimPath) {
    GTEST_SKIP() << "cpu_sim runs host functions on the launching thread, so "
                    "a stream cannot be held busy";
  }
  absl::StatusOr<DriverStream> side = driver_->CreateStream(0, 0);
  ASSERT_TRUE(side.ok()) << side.status();
  Block* used = Allocate(4096);
  void* address = used->ptr;
  {
    ::openreg::testing::StreamBlocker busy(*driver_, side->get());
    pool_->RecordStream(used, side->get());
    pool_->Free(used);
    DeviceMemoryStats stats = pool_->stats();
    EXPECT_EQ(Current(stats.allocated_bytes), 0);
    EXPECT_EQ(Current(stats.active), 1);  // waiting for the side stream
    Block* other = Allocate(4096);
    EXPECT_NE(other->ptr, address);
    pool_->Free(other);
  }  // the side stream runs on
  ASSERT_TRUE(driver_->StreamSynchronize(side->get()).ok());
  Block* reused = Allocate(4096);
  EXPECT_EQ(reused->ptr, address);
  EXPECT_EQ(Current(pool_->stats().active), 1);
  pool_->Free(reused);
}

TEST_P(DeviceMemoryPoolTest, EmptyCacheWaitsForRecordedStreams) {
  if (GetParam() == ::openreg::testing::kCpuSimPath) {
    GTEST_SKIP() << "cpu_sim runs host functions on the launching thread";
  }
  absl::StatusOr<DriverStream> side = driver_->CreateStream(0, 0);
  ASSERT_TRUE(side.ok());
  Block* used = Allocate(4096);
  auto busy = std::make_unique<::openreg::testing::StreamBlocker>(*driver_,
                                                                  side->get());
  pool_->RecordStream(used, side->get());
  pool_->Free(used);
  busy->Release();
  ASSERT_TRUE(pool_->EmptyCache().ok());
  EXPECT_EQ(Current(pool_->stats().reserved_bytes), 0);
  busy.reset();
}

TEST_P(DeviceMemoryPoolTest, UntrackableStreamUseRetiresTheBlock) {
  // An event cannot be recorded on a destroyed stream, so there is no telling
  // when that stream would be done: the block must never be handed out again.
  openreg_stream gone = nullptr;
  {
    absl::StatusOr<DriverStream> stream = driver_->CreateStream(0, 0);
    ASSERT_TRUE(stream.ok());
    gone = stream->get();
  }  // destroyed with its DriverStream
  Block* used = Allocate(4096);
  void* address = used->ptr;
  pool_->RecordStream(used, gone);
  pool_->Free(used);
  DeviceMemoryStats stats = pool_->stats();
  EXPECT_EQ(Current(stats.allocated_bytes), 0);
  EXPECT_EQ(Current(stats.active), 1);
  Block* other = Allocate(4096);
  EXPECT_NE(other->ptr, address);
  pool_->Free(other);
  ASSERT_TRUE(pool_->EmptyCache().ok());
  EXPECT_EQ(Current(pool_->stats().reserved_bytes), int64_t{kSmallSegmentSize});
}

TEST_P(DeviceMemoryPoolTest, AFailedRecordIsMadeGoodAtTheNextMiss) {
  // The first event_record fails (an injected fault): the block waits out of
  // circulation until a later record on the stream, made at the pool's next
  // miss, has fired, and then is free again, so the pool gives all its memory
  // back.
  DriverConfig config;
  config.device_count = 1;
  config.device_memory_bytes = kCapacity;
  config.options = "fault_points=event_record,fault_on_call=1";
  absl::StatusOr<std::unique_ptr<Driver>> faulty =
      Driver::Load(GetParam(), config);
  ASSERT_TRUE(faulty.ok()) << faulty.status();
  absl::StatusOr<DriverStream> side = (*faulty)->CreateStream(0, 0);
  ASSERT_TRUE(side.ok());
  {
    DeviceMemoryPool pool(**faulty, 0, AllocatorConfig(), history_);
    absl::StatusOr<Block*> used = pool.Allocate(4096, NoReclaim);
    ASSERT_TRUE(used.ok());
    pool.RecordStream(*used, side->get());
    pool.Free(*used);  // the record fails
    EXPECT_EQ(Current(pool.stats().active), 1);
    // A hit leaves it untracked.
    absl::StatusOr<Block*> hit = pool.Allocate(4096, NoReclaim);
    ASSERT_TRUE(hit.ok());
    EXPECT_EQ(Current(pool.stats().active), 2);
    // A miss (a large block: a new segment) records again (call 2
    // succeeds); the block is free once that record has fired, as the next
    // allocation finds.
    absl::StatusOr<Block*> miss = pool.Allocate(4 * kMiB, NoReclaim);
    ASSERT_TRUE(miss.ok());
    ASSERT_TRUE((*faulty)->StreamSynchronize(side->get()).ok());
    absl::StatusOr<Block*> next = pool.Allocate(4096, NoReclaim);
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(Current(pool.stats().active), 3);
    for (Block* block : {*hit, *miss, *next}) pool.Free(block);
    ASSERT_TRUE(pool.EmptyCache().ok());
    const DeviceMemoryStats stats = pool.stats();
    EXPECT_EQ(Current(stats.active), 0);
    EXPECT_EQ(Current(stats.reserved_bytes), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Drivers, DeviceMemoryPoolTest,
                         ::openreg::testing::ShippedDriverPaths(),
                         ::openreg::testing::DriverName);

}  // namespace
}  // namespace openreg
