// Note [Stream-ordered reuse] (device_memory_pool.h), on both shipped
// drivers: a block freed on a stream serves that stream's next allocation at
// once, serves no other stream and no allocation made inside work until the
// stream has caught up, and EmptyCache and the out-of-memory path catch the
// streams up themselves.
#include <memory>
#include <string>

#include "core/runtime/memory/device_memory_pool.h"
#include "core/runtime/memory/size_classes.h"
#include "gtest/gtest.h"
#include "tests/core/runtime/memory/memory_test_driver.h"

namespace openreg {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr uint64_t kCapacity = 64 * kMiB;
// One size of each pool: small blocks are reused unmerged (Note [Reuse
// before merge]), large ones from the free sets.
constexpr size_t kSmall = 4096;
constexpr size_t kLarge = 4 * kMiB;

void NoReclaim() {}

class StreamOrderedReuseTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    driver_ = ::openreg::testing::LoadTestDriver(GetParam(), kCapacity);
    ASSERT_NE(driver_, nullptr);
    pool_ = std::make_unique<DeviceMemoryPool>(*driver_, 0, AllocatorConfig(),
                                               history_);
    for (DriverStream* stream : {&a_, &b_}) {
      absl::StatusOr<DriverStream> made = driver_->CreateStream(0, 0);
      ASSERT_TRUE(made.ok()) << made.status();
      *stream = *std::move(made);
    }
  }

  void TearDown() override { pool_.reset(); }

  // The address of a block of `size` allocated for `stream` (null: from
  // inside work) and freed at once.
  void* AllocateAndFree(size_t size, openreg_stream stream) {
    absl::StatusOr<Block*> block = pool_->Allocate(size, NoReclaim, stream);
    EXPECT_TRUE(block.ok()) << block.status();
    if (!block.ok()) return nullptr;
    void* const address = (*block)->ptr;
    pool_->Free(*block);
    return address;
  }

  bool IsAsynchronous() const {
    return GetParam() == ::openreg::testing::kThreadedSimPath;
  }

  std::unique_ptr<Driver> driver_;
  MemoryHistory history_;
  std::unique_ptr<DeviceMemoryPool> pool_;
  DriverStream a_;
  DriverStream b_;
};

TEST_P(StreamOrderedReuseTest, AFreedBlockServesItsStreamAtOnce) {
  for (size_t size : {kSmall, kLarge}) {
    SCOPED_TRACE(size);
    // Even while the stream has not reached the work that used the block:
    // whatever the stream runs next comes after that work.
    std::unique_ptr<::openreg::testing::StreamBlocker> busy;
    if (IsAsynchronous()) {
      busy = std::make_unique<::openreg::testing::StreamBlocker>(*driver_,
                                                                 a_.get());
    }
    void* first = AllocateAndFree(size, a_.get());
    EXPECT_EQ(AllocateAndFree(size, a_.get()), first);
    EXPECT_EQ(AllocateAndFree(size, a_.get()), first);
  }
}

TEST_P(StreamOrderedReuseTest, NoOtherStreamNorWorkTakesItBeforeItSettles) {
  for (size_t size : {kSmall, kLarge}) {
    SCOPED_TRACE(size);
    absl::StatusOr<Block*> held = pool_->Allocate(size, NoReclaim, a_.get());
    ASSERT_TRUE(held.ok());
    void* const address = (*held)->ptr;
    EXPECT_EQ((*held)->stream, a_.get());
    pool_->Free(*held);
    absl::StatusOr<Block*> on_b = pool_->Allocate(size, NoReclaim, b_.get());
    absl::StatusOr<Block*> in_work = pool_->Allocate(size, NoReclaim);
    ASSERT_TRUE(on_b.ok() && in_work.ok());
    EXPECT_NE((*on_b)->ptr, address);
    EXPECT_NE((*in_work)->ptr, address);
    EXPECT_EQ((*in_work)->stream, nullptr);
    pool_->Free(*on_b);
    pool_->Free(*in_work);
  }
}

TEST_P(StreamOrderedReuseTest, TheRestOfASplitBlockStaysOnItsStream) {
  // The largest small block (two fill a small segment) and a large one.
  for (size_t size : {kSmallRequestLimit, kLarge}) {
    SCOPED_TRACE(size);
    // A neighbour keeps the freed block from merging with settled memory,
    // and leaves a small segment no settled memory to serve the half below.
    absl::StatusOr<Block*> block = pool_->Allocate(size, NoReclaim, a_.get());
    absl::StatusOr<Block*> neighbour =
        pool_->Allocate(size, NoReclaim, a_.get());
    ASSERT_TRUE(block.ok() && neighbour.ok());
    ASSERT_EQ((*block)->next, *neighbour);
    void* const address = (*block)->ptr;
    pool_->Free(*block);
    // The stream takes half of its block back; the other half is still the
    // stream's, as the whole block was, and must wait for it the same way.
    absl::StatusOr<Block*> half =
        pool_->Allocate(size / 2, NoReclaim, a_.get());
    ASSERT_TRUE(half.ok()) << half.status();
    ASSERT_EQ((*half)->ptr, address);
    void* const rest = static_cast<char*>(address) + size / 2;
    EXPECT_NE(AllocateAndFree(size / 2, nullptr), rest);
    EXPECT_NE(AllocateAndFree(size / 2, b_.get()), rest);
    EXPECT_EQ(AllocateAndFree(size / 2, a_.get()), rest);
    pool_->Free(*half);
    pool_->Free(*neighbour);
  }
}

TEST_P(StreamOrderedReuseTest, SettlingAfterAWaitLetsAnyoneReuseIt) {
  for (size_t size : {kSmall, kLarge}) {
    SCOPED_TRACE(size);
    void* const address = AllocateAndFree(size, a_.get());
    const uint64_t token = pool_->SettleToken();
    ASSERT_TRUE(driver_->StreamSynchronize(a_.get()).ok());
    pool_->Settle(a_.get(), token);
    EXPECT_EQ(AllocateAndFree(size, nullptr), address);
  }
}

TEST_P(StreamOrderedReuseTest, SettlingKeepsBlocksFreedAfterTheToken) {
  for (size_t size : {kSmall, kLarge}) {
    SCOPED_TRACE(size);
    const uint64_t token = pool_->SettleToken();
    void* const address = AllocateAndFree(size, a_.get());
    pool_->Settle(/*stream=*/nullptr, token);
    EXPECT_NE(AllocateAndFree(size, b_.get()), address);
    // Settling another stream does not touch a_'s blocks either.
    pool_->Settle(b_.get(), pool_->SettleToken());
    EXPECT_NE(AllocateAndFree(size, b_.get()), address);
    EXPECT_EQ(AllocateAndFree(size, a_.get()), address);
  }
}

TEST_P(StreamOrderedReuseTest, EmptyCacheCatchesTheStreamsUpAndReturnsAll) {
  AllocateAndFree(kSmall, a_.get());
  AllocateAndFree(kLarge, b_.get());
  ASSERT_GT(pool_->stats().reserved_bytes[StatPool::kAll].current, 0);
  ASSERT_TRUE(pool_->EmptyCache().ok());
  EXPECT_EQ(pool_->stats().reserved_bytes[StatPool::kAll].current, 0);
}

TEST_P(StreamOrderedReuseTest, OutOfMemoryCatchesTheStreamsUpBeforeFailing) {
  // Two thirds of the device cached for a_: b_ can have its request only
  // once the pool has synchronized and returned a_'s settled segments.
  absl::StatusOr<Block*> first =
      pool_->Allocate(30 * kMiB, NoReclaim, a_.get());
  absl::StatusOr<Block*> second =
      pool_->Allocate(30 * kMiB, NoReclaim, a_.get());
  ASSERT_TRUE(first.ok() && second.ok());
  pool_->Free(*first);
  pool_->Free(*second);
  int reclaims = 0;
  absl::StatusOr<Block*> block =
      pool_->Allocate(40 * kMiB, [&] { ++reclaims; }, b_.get());
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_EQ(reclaims, 1);
  EXPECT_EQ((*block)->stream, b_.get());
  pool_->Free(*block);
}

TEST_P(StreamOrderedReuseTest, BlocksOfDifferentStreamsDoNotMerge) {
  // Two neighbours in one large segment, freed on different streams: each
  // stays whole and serves only its own stream.
  absl::StatusOr<Block*> low = pool_->Allocate(kLarge, NoReclaim, a_.get());
  absl::StatusOr<Block*> high = pool_->Allocate(kLarge, NoReclaim, b_.get());
  ASSERT_TRUE(low.ok() && high.ok());
  ASSERT_EQ((*low)->next, *high);
  void* const low_address = (*low)->ptr;
  void* const high_address = (*high)->ptr;
  pool_->Free(*low);
  pool_->Free(*high);
  EXPECT_EQ(AllocateAndFree(kLarge, a_.get()), low_address);
  EXPECT_EQ(AllocateAndFree(kLarge, b_.get()), high_address);
}

INSTANTIATE_TEST_SUITE_P(Drivers, StreamOrderedReuseTest,
                         ::openreg::testing::ShippedDriverPaths(),
                         ::openreg::testing::DriverName);

}  // namespace
}  // namespace openreg
