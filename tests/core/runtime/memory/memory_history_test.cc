// Memory history and snapshots of the caching allocator (Note [Memory
// history]): the actions recorded, the ring buffer's bound, contexts kept on
// live blocks, segments that agree with the statistics, and recording from
// many threads at once (run under --config=tsan and --config=asan).
#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/memory/caching_device_allocator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/runtime/memory/memory_test_driver.h"

namespace openreg {
namespace {

using ::openreg::testing::LoadTestDriver;
using ::testing::ElementsAre;

constexpr int32_t kDevices = 2;

void NoReclaim() {}

// A context whose frames are a number, so tests can tell contexts apart.
MemoryHistory::Gatherer CountingGatherer(
    std::shared_ptr<std::atomic<int>> count) {
  return [count](int32_t device, bool with_frames) {
    HistoryContext context;
    context.stream = 100 + device;
    if (with_frames) context.frames = std::make_shared<int>(++*count);
    return context;
  };
}

std::vector<std::string> Actions(const std::vector<TraceEntry>& trace) {
  std::vector<std::string> names;
  for (const TraceEntry& entry : trace)
    names.push_back(TraceActionName(entry.action));
  return names;
}

class MemoryHistoryTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    driver_ = LoadTestDriver(GetParam(), uint64_t{256} << 20, kDevices);
    ASSERT_NE(driver_, nullptr);
    allocator_ = std::make_unique<CachingDeviceAllocator>(*driver_, kDevices,
                                                          AllocatorConfig());
  }
  void TearDown() override { allocator_.reset(); }

  HistorySettings Tracing(size_t max_entries, ContextWhen context) {
    HistorySettings settings;
    settings.record_trace = true;
    settings.context = context;
    settings.max_entries = max_entries;
    return settings;
  }

  std::unique_ptr<Driver> driver_;
  std::unique_ptr<CachingDeviceAllocator> allocator_;
  std::shared_ptr<std::atomic<int>> count_ =
      std::make_shared<std::atomic<int>>(0);
};

TEST_P(MemoryHistoryTest, RecordsNothingWhenOff) {
  void* ptr = allocator_->Allocate(0, 4096, NoReclaim).value()->ptr;
  const MemorySnapshot snapshot = allocator_->Snapshot();
  ASSERT_EQ(snapshot.device_traces.size(), kDevices);
  EXPECT_TRUE(snapshot.device_traces[0].empty());
  ASSERT_EQ(snapshot.segments.size(), 1u);
  EXPECT_EQ(snapshot.segments[0].blocks[0].frames, nullptr);
  EXPECT_EQ(*count_, 0);
  EXPECT_TRUE(allocator_->FreeAt(ptr));
}

TEST_P(MemoryHistoryTest, TracesEveryActionInOrder) {
  allocator_->EnableHistory(Tracing(100, ContextWhen::kAll),
                            CountingGatherer(count_));
  void* ptr = allocator_->Allocate(1, 4096, NoReclaim).value()->ptr;
  EXPECT_TRUE(allocator_->FreeAt(ptr));
  ASSERT_TRUE(allocator_->pool(1).EmptyCache().ok());
  const std::vector<TraceEntry> trace = allocator_->Snapshot().device_traces[1];
  EXPECT_THAT(Actions(trace),
              ElementsAre("segment_alloc", "alloc", "free_requested",
                          "free_completed", "segment_free", "snapshot"));
  EXPECT_EQ(trace[1].address, reinterpret_cast<uintptr_t>(ptr));
  EXPECT_EQ(trace[1].size, 4096u);
  EXPECT_EQ(trace[1].stream, 101u);
  EXPECT_NE(trace[1].frames, nullptr);
  EXPECT_NE(trace[2].frames, nullptr);  // context "all": frees too
  EXPECT_EQ(trace[0].size, trace[4].size);
  EXPECT_LE(trace[0].time_us, trace[4].time_us);
  // Each snapshot is in every device's trace.
  EXPECT_THAT(Actions(allocator_->Snapshot().device_traces[0]),
              ElementsAre("snapshot", "snapshot"));
}

TEST_P(MemoryHistoryTest, ContextAllocKeepsNoFreeStacks) {
  allocator_->EnableHistory(Tracing(100, ContextWhen::kAlloc),
                            CountingGatherer(count_));
  void* ptr = allocator_->Allocate(0, 4096, NoReclaim).value()->ptr;
  EXPECT_TRUE(allocator_->FreeAt(ptr));
  const std::vector<TraceEntry> trace = allocator_->Snapshot().device_traces[0];
  ASSERT_EQ(Actions(trace)[2], "free_requested");
  EXPECT_NE(trace[1].frames, nullptr);
  EXPECT_EQ(trace[2].frames, nullptr);
}

TEST_P(MemoryHistoryTest, RingBufferKeepsTheNewestEntries) {
  allocator_->EnableHistory(Tracing(5, ContextWhen::kNever),
                            CountingGatherer(count_));
  for (int i = 0; i < 10; ++i) {
    void* ptr = allocator_->Allocate(0, 512 * (i + 1), NoReclaim).value()->ptr;
    EXPECT_TRUE(allocator_->FreeAt(ptr));
  }
  const std::vector<TraceEntry> trace = allocator_->Snapshot().device_traces[0];
  ASSERT_EQ(trace.size(), 5u);
  // The end of the ninth round, the tenth, and the snapshot itself.
  EXPECT_THAT(Actions(trace),
              ElementsAre("free_completed", "alloc", "free_requested",
                          "free_completed", "snapshot"));
  EXPECT_EQ(trace[1].size, 5120u);
  EXPECT_EQ(*count_, 0);  // no stacks asked for
  // A smaller bound keeps the newest that fit.
  allocator_->EnableHistory(Tracing(2, ContextWhen::kNever),
                            CountingGatherer(count_));
  const std::vector<TraceEntry> kept = allocator_->Snapshot().device_traces[0];
  EXPECT_THAT(Actions(kept), ElementsAre("snapshot", "snapshot"));
}

TEST_P(MemoryHistoryTest, DisableDropsTheTraceAndStateKeepsStacksOnly) {
  allocator_->EnableHistory(Tracing(100, ContextWhen::kAll),
                            CountingGatherer(count_));
  EXPECT_TRUE(
      allocator_->FreeAt(allocator_->Allocate(0, 4096, NoReclaim).value()->ptr));
  allocator_->DisableHistory();
  EXPECT_TRUE(allocator_->Snapshot().device_traces[0].empty());
  HistorySettings state;
  state.context = ContextWhen::kState;
  allocator_->EnableHistory(state, CountingGatherer(count_));
  void* ptr = allocator_->Allocate(0, 4096, NoReclaim).value()->ptr;
  const MemorySnapshot snapshot = allocator_->Snapshot();
  EXPECT_TRUE(snapshot.device_traces[0].empty());
  bool found = false;
  for (const SegmentSnapshot& segment : snapshot.segments) {
    for (const BlockSnapshot& block : segment.blocks) {
      if (block.address != reinterpret_cast<uintptr_t>(ptr)) continue;
      found = true;
      EXPECT_NE(block.frames, nullptr);
      EXPECT_EQ(block.state, BlockState::kAllocated);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_TRUE(allocator_->FreeAt(ptr));
}

TEST_P(MemoryHistoryTest, SkippedActionsAreNotRecorded) {
  HistorySettings settings = Tracing(100, ContextWhen::kNever);
  settings.skipped_actions =
      (1u << static_cast<int>(TraceAction::kFreeRequested)) |
      (1u << static_cast<int>(TraceAction::kSnapshot));
  allocator_->EnableHistory(settings, CountingGatherer(count_));
  EXPECT_TRUE(
      allocator_->FreeAt(allocator_->Allocate(0, 4096, NoReclaim).value()->ptr));
  EXPECT_THAT(Actions(allocator_->Snapshot().device_traces[0]),
              ElementsAre("segment_alloc", "alloc", "free_completed"));
}

TEST_P(MemoryHistoryTest, OutOfMemoryIsRecorded) {
  allocator_->EnableHistory(Tracing(100, ContextWhen::kAll),
                            CountingGatherer(count_));
  EXPECT_FALSE(allocator_->Allocate(0, size_t{1} << 40, NoReclaim).ok());
  const std::vector<TraceEntry> trace = allocator_->Snapshot().device_traces[0];
  ASSERT_EQ(Actions(trace)[0], "oom");
  EXPECT_EQ(trace[0].size, size_t{1} << 40);
  EXPECT_GT(trace[0].device_free, 0u);
}

// Segments cover their blocks exactly, in address order, and add up to the
// statistics, through splits and merges.
TEST_P(MemoryHistoryTest, SegmentsAgreeWithStatistics) {
  std::mt19937 random(3);
  std::vector<void*> live;
  for (int i = 0; i < 300; ++i) {
    const size_t size =
        random() % 4 == 0 ? random() % (6u << 20) : random() % 65536;
    live.push_back(allocator_->Allocate(0, size, NoReclaim).value()->ptr);
    if (random() % 2 == 0) {
      const size_t victim = random() % live.size();
      EXPECT_TRUE(allocator_->FreeAt(live[victim]));
      live.erase(live.begin() + victim);
    }
  }
  const MemorySnapshot snapshot = allocator_->Snapshot();
  const DeviceMemoryStats stats = allocator_->pool(0).stats();
  int64_t reserved = 0, allocated = 0, requested = 0, blocks = 0;
  for (const SegmentSnapshot& segment : snapshot.segments) {
    uintptr_t next = segment.address;
    for (const BlockSnapshot& block : segment.blocks) {
      EXPECT_EQ(block.address, next);
      next += block.size;
      if (block.state == BlockState::kAllocated) ++blocks;
    }
    EXPECT_EQ(next, segment.address + segment.total_size);
    reserved += segment.total_size;
    allocated += segment.allocated_size;
    requested += segment.requested_size;
  }
  EXPECT_EQ(reserved, stats.reserved_bytes[StatPool::kAll].current);
  EXPECT_EQ(allocated, stats.allocated_bytes[StatPool::kAll].current);
  EXPECT_EQ(requested, stats.requested_bytes[StatPool::kAll].current);
  EXPECT_EQ(blocks, stats.allocation[StatPool::kAll].current);
  for (void* ptr : live) EXPECT_TRUE(allocator_->FreeAt(ptr));
}

TEST_P(MemoryHistoryTest, PrivatePoolSegmentsCarryTheirId) {
  const PrivatePoolId pool{5, 2};
  allocator_->UsePrivatePool(0, pool);
  void* ptr =
      allocator_->AllocateFromPrivatePool(0, pool, 4096, NoReclaim)
          .value()
          ->ptr;
  std::vector<PrivatePoolId> ids;
  for (const SegmentSnapshot& segment : allocator_->Snapshot().segments) {
    ids.push_back(segment.pool);
  }
  EXPECT_THAT(ids, ElementsAre(pool));
  EXPECT_TRUE(allocator_->FreeAt(ptr));
  ASSERT_TRUE(allocator_->ReleasePrivatePool(0, pool).ok());
}

// Recording, snapshots and settings changes from many threads at once.
TEST_P(MemoryHistoryTest, ConcurrentRecordingAndSnapshots) {
  allocator_->EnableHistory(Tracing(64, ContextWhen::kAll),
                            CountingGatherer(count_));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(t);
      for (int i = 0; i < 200; ++i) {
        const int32_t device = static_cast<int32_t>(random() % kDevices);
        void* ptr =
            allocator_->Allocate(device, random() % 65536, NoReclaim)
                .value()
                ->ptr;
        EXPECT_TRUE(allocator_->FreeAt(ptr));
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 20; ++i) {
      EXPECT_LE(allocator_->Snapshot().device_traces[0].size(), 64u);
      allocator_->EnableHistory(Tracing(32 + i, ContextWhen::kAlloc),
                                CountingGatherer(count_));
    }
  });
  for (std::thread& thread : threads) thread.join();
  for (const auto& trace : allocator_->Snapshot().device_traces) {
    EXPECT_LE(trace.size(), 64u);
  }
}

INSTANTIATE_TEST_SUITE_P(Drivers, MemoryHistoryTest,
                         ::openreg::testing::ShippedDriverPaths(),
                         ::openreg::testing::DriverName);

}  // namespace
}  // namespace openreg
