// Note [Stream-ordered reuse] (device_memory_pool.h), on both shipped
// drivers: a block freed on a stream serves that stream's next allocation at
// once, serves no other stream and no allocation made inside work until the
// stream has caught up, but work enqueued on that stream after the free,
// and EmptyCache and the out-of-memory path catch the
// streams up themselves.
#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/memory/device_memory_pool.h"
#include "core/runtime/memory/size_classes.h"
#include "gtest/gtest.h"
#include "tests/core/runtime/memory/memory_test_driver.h"

namespace openreg {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr uint64_t kCapacity = 64 * kMiB;
// One size of each pool, whose segments and splitting rules differ; both
// are reused unmerged first (Note [Reuse before merge]).
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

  // Blocks of `sizes` for stream a, one after another in one segment.
  std::vector<Block*> AllocateOnA(std::initializer_list<size_t> sizes) {
    std::vector<Block*> blocks;
    for (size_t size : sizes) {
      absl::StatusOr<Block*> block = pool_->Allocate(size, NoReclaim, a_.get());
      EXPECT_TRUE(block.ok()) << block.status();
      if (!block.ok()) return {};
      if (!blocks.empty()) {
        EXPECT_EQ(blocks.back()->next, *block);
      }
      blocks.push_back(*block);
    }
    return blocks;
  }

  // Waits for `stream` and settles what it freed before.
  void SynchronizeAndSettle(openreg_stream stream) {
    const uint64_t token = pool_->SettleToken();
    ASSERT_TRUE(driver_->StreamSynchronize(stream).ok());
    pool_->Settle(stream, token);
  }

  // Takes, from inside work, the settled rest of the segment that a block of
  // `size` was just split from, so that work finds no settled memory left.
  std::vector<Block*> TakeTheRestOfTheSegment(size_t size) {
    std::vector<Block*> taken;
    size_t left = SegmentSizeFor(size) - size;
    while (left > 0) {
      const size_t chunk = IsSmallBlockSize(size)
                               ? std::min(left, kSmallRequestLimit)
                               : left;
      absl::StatusOr<Block*> block = pool_->Allocate(chunk, NoReclaim);
      EXPECT_TRUE(block.ok()) << block.status();
      if (!block.ok()) break;
      taken.push_back(*block);
      left -= chunk;
    }
    return taken;
  }

  // A blocker holding `stream` on an asynchronous driver; null on a
  // synchronous one, which runs the blocker on the launching thread.
  std::unique_ptr<::openreg::testing::StreamBlocker> HoldIfAsynchronous(
      openreg_stream stream) {
    if (!IsAsynchronous()) return nullptr;
    return std::make_unique<::openreg::testing::StreamBlocker>(*driver_,
                                                               stream);
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
    std::unique_ptr<::openreg::testing::StreamBlocker> busy =
        HoldIfAsynchronous(a_.get());
    void* first = AllocateAndFree(size, a_.get());
    EXPECT_EQ(AllocateAndFree(size, a_.get()), first);
    EXPECT_EQ(AllocateAndFree(size, a_.get()), first);
  }
}

TEST_P(StreamOrderedReuseTest, NoOtherStreamNorEarlierWorkTakesItBeforeItSettles) {
  // Only a stream that can lag behind its host: a synchronous driver's
  // stream has run everything by the time of the free, and a settle marker
  // says so (AStreamThatCaughtUpSettlesWithoutASynchronization).
  if (!IsAsynchronous()) GTEST_SKIP() << "a synchronous stream never lags";
  // A large size with a segment of its own: four more would not fit the
  // device beside four large shared segments.
  for (size_t size : {kSmall, kLargeSegmentThreshold + 2 * kMiB}) {
    SCOPED_TRACE(size);
    ::openreg::testing::StreamBlocker busy(*driver_, a_.get());
    absl::StatusOr<Block*> held = pool_->Allocate(size, NoReclaim, a_.get());
    ASSERT_TRUE(held.ok());
    void* const address = (*held)->ptr;
    EXPECT_EQ((*held)->stream, a_.get());
    const StreamPoint before_free{a_.get(), pool_->SettleToken()};
    pool_->Free(*held);
    // Each request below takes a new segment, whose rest is then taken too,
    // so that none finds settled memory.
    std::vector<Block*> taken = TakeTheRestOfTheSegment(size);
    const auto take_new_memory = [&](absl::StatusOr<Block*> block) {
      ASSERT_TRUE(block.ok()) << block.status();
      EXPECT_NE((*block)->ptr, address);
      taken.push_back(*block);
      for (Block* rest : TakeTheRestOfTheSegment(size)) taken.push_back(rest);
    };
    take_new_memory(pool_->Allocate(size, NoReclaim, b_.get()));
    // Work anywhere, work on a_ enqueued before the free, work on b_.
    for (const StreamPoint& point :
         {StreamPoint(), before_free,
          StreamPoint{b_.get(), pool_->SettleToken()}}) {
      take_new_memory(
          pool_->Allocate(size, NoReclaim, /*stream=*/nullptr, point));
      EXPECT_EQ(taken.back()->stream, nullptr);
    }
    for (Block* block : taken) pool_->Free(block);
  }
}

TEST_P(StreamOrderedReuseTest, WorkTakesItsStreamsBlocksFreedBeforeIt) {
  // Note [Reuse inside work]: work enqueued on a_ after a free on a_ runs
  // after every use of the block on a_, so it may take the block while a_
  // still lags, instead of new memory. (On a synchronous driver, the settle
  // marker a miss would record has the same effect.)
  for (size_t size : {kSmall, kLarge}) {
    SCOPED_TRACE(size);
    std::unique_ptr<::openreg::testing::StreamBlocker> busy =
        HoldIfAsynchronous(a_.get());
    absl::StatusOr<Block*> held = pool_->Allocate(size, NoReclaim, a_.get());
    ASSERT_TRUE(held.ok());
    void* const address = (*held)->ptr;
    pool_->Free(*held);
    const StreamPoint after_free{a_.get(), pool_->SettleToken()};
    const int64_t segments = pool_->stats().num_device_alloc;
    std::vector<Block*> rest = TakeTheRestOfTheSegment(size);
    absl::StatusOr<Block*> in_work =
        pool_->Allocate(size, NoReclaim, /*stream=*/nullptr, after_free);
    ASSERT_TRUE(in_work.ok());
    EXPECT_EQ((*in_work)->ptr, address);
    EXPECT_EQ(pool_->stats().num_device_alloc, segments);
    // The work owns it while it runs, and frees it once done: settled.
    EXPECT_EQ((*in_work)->stream, nullptr);
    pool_->Free(*in_work);
    for (Block* block : rest) pool_->Free(block);
  }
}

TEST_P(StreamOrderedReuseTest, AStreamThatCaughtUpSettlesWithoutASynchronization) {
  // Note [Settling without a synchronization]. Each round the host takes a
  // block for a_, the settled one work freed last (its size's list serves
  // the last freed first), and work takes one: without settling, work would
  // find only a_'s blocks and take a new segment every round. The stream
  // catches up by itself between rounds, unknown to the pool.
  const size_t size = kSmallRequestLimit;  // two fill a small segment
  for (int round = 0; round < 20; ++round) {
    absl::StatusOr<Block*> host = pool_->Allocate(size, NoReclaim, a_.get());
    absl::StatusOr<Block*> work = pool_->Allocate(size, NoReclaim);
    ASSERT_TRUE(host.ok() && work.ok());
    pool_->Free(*host);
    pool_->Free(*work);
    ASSERT_TRUE(driver_->StreamSynchronize(a_.get()).ok());
  }
  // A synchronous driver has passed each marker at once. An asynchronous one
  // has by the next round, but a marker covers only the frees made before
  // it, and whether it has passed right after its record is a race: now and
  // then a request finds nothing settled yet and takes a segment (2 to 4 of
  // them in 20 rounds here). Without markers: one per round.
  EXPECT_LE(pool_->stats().num_device_alloc, IsAsynchronous() ? 10 : 1);
}

TEST_P(StreamOrderedReuseTest, ALaggingStreamsBlocksWaitForItsMarker) {
  // The marker stands for the frees before it: while the stream lags, work
  // takes new memory; once the stream has run past it, the blocks settle.
  if (!IsAsynchronous()) GTEST_SKIP() << "a synchronous stream never lags";
  void* address = nullptr;
  // The rest of the first segment, so that work finds no settled memory.
  absl::StatusOr<Block*> rest = absl::InternalError("not allocated");
  {
    ::openreg::testing::StreamBlocker busy(*driver_, a_.get());
    absl::StatusOr<Block*> freed = pool_->Allocate(kLarge, NoReclaim, a_.get());
    ASSERT_TRUE(freed.ok());
    address = (*freed)->ptr;
    rest = pool_->Allocate(kLargeSegmentSize - kLarge, NoReclaim);
    ASSERT_TRUE(rest.ok());
    pool_->Free(*freed);
    EXPECT_NE(AllocateAndFree(kLarge, nullptr), address);
    EXPECT_EQ(pool_->stats().num_device_alloc, 2);
  }  // the stream runs on, past the marker
  ASSERT_TRUE(driver_->StreamSynchronize(a_.get()).ok());
  // The second segment, whole again, taken so that work misses once more and
  // the pool looks at its marker.
  absl::StatusOr<Block*> second =
      pool_->Allocate(kLargeSegmentSize, NoReclaim);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(AllocateAndFree(kLarge, nullptr), address);
  EXPECT_EQ(pool_->stats().num_device_alloc, 2);
  pool_->Free(*second);
  pool_->Free(*rest);
}

TEST_P(StreamOrderedReuseTest, TheRestOfASplitBlockStaysOnItsStream) {
  if (!IsAsynchronous()) GTEST_SKIP() << "a synchronous stream never lags";
  // The largest small block (two fill a small segment) and a large one.
  for (size_t size : {kSmallRequestLimit, kLarge}) {
    SCOPED_TRACE(size);
    ::openreg::testing::StreamBlocker busy(*driver_, a_.get());
    // A neighbour keeps the freed block from merging with settled memory,
    // and a filler the rest of the segment (none left in a small one): no
    // settled memory serves the half below.
    absl::StatusOr<Block*> block = pool_->Allocate(size, NoReclaim, a_.get());
    absl::StatusOr<Block*> neighbour =
        pool_->Allocate(size, NoReclaim, a_.get());
    ASSERT_TRUE(block.ok() && neighbour.ok());
    ASSERT_EQ((*block)->next, *neighbour);
    const size_t left = SegmentSizeFor(size) - 2 * size;
    absl::StatusOr<Block*> filler =
        left > 0 ? pool_->Allocate(left, NoReclaim, a_.get())
                 : absl::StatusOr<Block*>(nullptr);
    ASSERT_TRUE(filler.ok());
    ASSERT_EQ((*neighbour)->next, *filler);
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
    if (*filler != nullptr) pool_->Free(*filler);
  }
}

TEST_P(StreamOrderedReuseTest, TheHostJoinsItsFreedMemoryToSettledMemoryNextToIt) {
  // One 20 MiB segment, full: [x 4 MiB][y 4 MiB][z 12 MiB], all on a.
  const std::vector<Block*> xyz = AllocateOnA({4 * kMiB, 4 * kMiB, 12 * kMiB});
  ASSERT_EQ(xyz.size(), 3u);
  void* const address = xyz[0]->ptr;
  // y is freed and settled by a synchronization...
  pool_->Free(xyz[1]);
  SynchronizeAndSettle(a_.get());
  // ...then x is freed on a, which may lag behind it: side by side, 4 MiB
  // of each kind, and neither serves 8 MiB alone.
  std::unique_ptr<::openreg::testing::StreamBlocker> busy =
      HoldIfAsynchronous(a_.get());
  pool_->Free(xyz[0]);
  // The host's next request on a takes both, not a new segment: x is a's
  // to reuse, and y anyone's.
  absl::StatusOr<Block*> both = pool_->Allocate(8 * kMiB, NoReclaim, a_.get());
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ((*both)->ptr, address);
  EXPECT_EQ(pool_->stats().num_device_alloc, 1);
  busy.reset();
  pool_->Free(*both);
  pool_->Free(xyz[2]);
}

TEST_P(StreamOrderedReuseTest, SettledLargeBlocksMergeAndServeBestFit) {
  // [x 4 MiB][y 4 MiB][z 12 MiB] on a; x then y freed, kept whole on their
  // size's list (Note [Reuse before merge]).
  const std::vector<Block*> xyz = AllocateOnA({4 * kMiB, 4 * kMiB, 12 * kMiB});
  ASSERT_EQ(xyz.size(), 3u);
  void* const lowest = xyz[0]->ptr;
  pool_->Free(xyz[0]);
  pool_->Free(xyz[1]);
  SynchronizeAndSettle(a_.get());
  // Settling merged them: work gets the best fit at the lowest address,
  // not y, the last freed, and 8 MiB fits without another segment.
  EXPECT_EQ(AllocateAndFree(4 * kMiB, nullptr), lowest);
  EXPECT_EQ(AllocateAndFree(8 * kMiB, nullptr), lowest);
  EXPECT_EQ(pool_->stats().num_device_alloc, 1);
  pool_->Free(xyz[2]);
}

TEST_P(StreamOrderedReuseTest, TheHostTakesItsStreamsMemoryBeforeSettledMemory) {
  // [x 8 MiB][s 4 MiB][w 8 MiB] on a. s is freed and settled, then x is
  // freed on a and kept whole on the 8 MiB list.
  const std::vector<Block*> xsw = AllocateOnA({8 * kMiB, 4 * kMiB, 8 * kMiB});
  ASSERT_EQ(xsw.size(), 3u);
  void* const own = xsw[0]->ptr;
  pool_->Free(xsw[1]);
  SynchronizeAndSettle(a_.get());
  pool_->Free(xsw[0]);
  // Settled memory is all that work can take; the host on a takes a's own
  // block, though no list holds its size and settled memory fits.
  absl::StatusOr<Block*> taken = pool_->Allocate(4 * kMiB, NoReclaim, a_.get());
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ((*taken)->ptr, own);
  pool_->Free(*taken);
  pool_->Free(xsw[2]);
}

TEST_P(StreamOrderedReuseTest, SettlingAfterAWaitLetsAnyoneReuseIt) {
  for (size_t size : {kSmall, kLarge}) {
    SCOPED_TRACE(size);
    void* const address = AllocateAndFree(size, a_.get());
    SynchronizeAndSettle(a_.get());
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
  // once a_'s blocks have settled and their segments gone back. A lagging
  // stream (held until the pool reclaims) settles only once the pool has
  // synchronized; a synchronous one by its settle marker, with no wait.
  std::unique_ptr<::openreg::testing::StreamBlocker> busy;
  if (IsAsynchronous()) {
    busy = std::make_unique<::openreg::testing::StreamBlocker>(*driver_,
                                                               a_.get());
  }
  absl::StatusOr<Block*> first =
      pool_->Allocate(30 * kMiB, NoReclaim, a_.get());
  absl::StatusOr<Block*> second =
      pool_->Allocate(30 * kMiB, NoReclaim, a_.get());
  ASSERT_TRUE(first.ok() && second.ok());
  pool_->Free(*first);
  pool_->Free(*second);
  int reclaims = 0;
  absl::StatusOr<Block*> block = pool_->Allocate(
      40 * kMiB,
      [&] {
        ++reclaims;
        if (busy != nullptr) busy->Release();
      },
      b_.get());
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_EQ(reclaims, IsAsynchronous() ? 1 : 0);
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
