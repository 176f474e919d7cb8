// Stress tier: many streams and events at once, many threads creating and
// destroying, long runs. Correct drivers pass quickly; these find leaks,
// races and order bugs that the small tests are too short to show. Select
// or leave them out with --gtest_filter=StressTest.* / -*StressTest.*.
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "tests/conformance/driver_fixture.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(StressTest, InitializedDriverTest);

openreg_status Count(void* counter) {
  ++*static_cast<std::atomic<int>*>(counter);
  return OPENREG_SUCCESS;
}

// Each stream's items see the previous stream's items finished: the chain of
// waits runs across all streams of all devices.
struct ChainLink {
  const std::atomic<int>* previous = nullptr;  // null for the first stream
  int previous_expected = 0;
  std::atomic<int> count{0};
  std::atomic<int> out_of_order{0};
};

openreg_status CountAfterPrevious(void* user_data) {
  auto* link = static_cast<ChainLink*>(user_data);
  if (link->previous != nullptr &&
      link->previous->load() != link->previous_expected) {
    ++link->out_of_order;
  }
  ++link->count;
  return OPENREG_SUCCESS;
}

TEST_P(StressTest, ManyStreamsAndEventsChainedAcrossDevices) {
  constexpr int kStreamsPerDevice = 24;
  constexpr int kItems = 8;
  constexpr int kStreams = kStreamsPerDevice * kDeviceCount;
  std::vector<openreg_stream> streams;
  std::vector<openreg_event> events;
  std::vector<std::unique_ptr<ChainLink>> links;
  for (int i = 0; i < kStreams; ++i) {
    const int32_t device = i % kDeviceCount;
    streams.push_back(NewStream(device));
    events.push_back(NewEvent(device, OPENREG_EVENT_DEFAULT));
    links.push_back(std::make_unique<ChainLink>());
    if (i > 0) {
      links[i]->previous = &links[i - 1]->count;
      links[i]->previous_expected = kItems;
      ASSERT_EQ(api_->stream_wait_event(context_, streams[i], events[i - 1]),
                OPENREG_SUCCESS)
          << api_->last_error_message(context_);
    }
    for (int item = 0; item < kItems; ++item) {
      ASSERT_EQ(api_->launch_host_func(context_, streams[i], CountAfterPrevious,
                                       links[i].get()),
                OPENREG_SUCCESS)
          << api_->last_error_message(context_);
    }
    ASSERT_EQ(api_->event_record(context_, events[i], streams[i]),
              OPENREG_SUCCESS)
        << api_->last_error_message(context_);
  }
  ASSERT_EQ(api_->event_synchronize(context_, events.back()), OPENREG_SUCCESS);
  for (int i = 0; i < kStreams; ++i) {
    EXPECT_EQ(api_->event_query(context_, events[i]), OPENREG_SUCCESS)
        << "stream " << i;
    EXPECT_EQ(links[i]->count.load(), kItems) << "stream " << i;
    EXPECT_EQ(links[i]->out_of_order.load(), 0) << "stream " << i;
  }
  for (int i = 0; i < kStreams; ++i) {
    EXPECT_EQ(api_->event_destroy(context_, events[i]), OPENREG_SUCCESS);
    EXPECT_EQ(api_->stream_destroy(context_, streams[i]), OPENREG_SUCCESS);
  }
}

TEST_P(StressTest, ManyThreadsCreateUseAndDestroyHandles) {
  constexpr int kThreads = 8;
  constexpr int kIterations = 40;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, &failures] {
      for (int i = 0; i < kIterations; ++i) {
        const int32_t device = (t + i) % kDeviceCount;
        openreg_stream stream = nullptr;
        openreg_event event = nullptr;
        void* memory = nullptr;
        std::atomic<int> counter{0};
        const bool ok =
            api_->stream_create(context_, device, 0, &stream) ==
                OPENREG_SUCCESS &&
            api_->event_create(context_, device, OPENREG_EVENT_DEFAULT,
                               &event) == OPENREG_SUCCESS &&
            api_->device_malloc(context_, device, 4096, &memory) ==
                OPENREG_SUCCESS &&
            api_->memset_async(context_, memory, t, 4096, stream) ==
                OPENREG_SUCCESS &&
            api_->launch_host_func(context_, stream, Count, &counter) ==
                OPENREG_SUCCESS &&
            api_->event_record(context_, event, stream) == OPENREG_SUCCESS &&
            api_->event_synchronize(context_, event) == OPENREG_SUCCESS &&
            counter.load() == 1;
        if (!ok) ++failures[t];
        if (event != nullptr &&
            api_->event_destroy(context_, event) != OPENREG_SUCCESS) {
          ++failures[t];
        }
        if (stream != nullptr &&
            (api_->stream_synchronize(context_, stream) != OPENREG_SUCCESS ||
             api_->stream_destroy(context_, stream) != OPENREG_SUCCESS)) {
          ++failures[t];
        }
        if (memory != nullptr &&
            api_->device_free(context_, device, memory) != OPENREG_SUCCESS) {
          ++failures[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
  }
  for (int32_t device = 0; device < kDeviceCount; ++device) {
    EXPECT_EQ(FreeBytes(device), kCapacity) << "device " << device;
  }
}

// Each item checks that it is the next one: a long queue keeps FIFO order
// and finishes.
struct Sequence {
  std::atomic<int> next{0};
  std::atomic<int> out_of_order{0};
};
struct SequenceItem {
  Sequence* sequence;
  int index;
};

openreg_status CheckTurn(void* user_data) {
  auto* item = static_cast<SequenceItem*>(user_data);
  if (item->sequence->next.load() != item->index) {
    ++item->sequence->out_of_order;
  }
  item->sequence->next.store(item->index + 1);
  return OPENREG_SUCCESS;
}

TEST_P(StressTest, LongRunKeepsStreamOrder) {
  constexpr int kItems = 5000;
  openreg_stream stream = NewStream(1);
  Sequence sequence;
  std::vector<SequenceItem> items(kItems);
  for (int i = 0; i < kItems; ++i) {
    items[i] = SequenceItem{&sequence, i};
    ASSERT_EQ(api_->launch_host_func(context_, stream, CheckTurn, &items[i]),
              OPENREG_SUCCESS)
        << "item " << i << ": " << api_->last_error_message(context_);
    if (i % 500 == 499) {
      const openreg_status query = api_->stream_query(context_, stream);
      EXPECT_TRUE(query == OPENREG_SUCCESS || query == OPENREG_ERROR_NOT_READY)
          << query;
    }
  }
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(sequence.next.load(), kItems);
  EXPECT_EQ(sequence.out_of_order.load(), 0);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(StressTest, AllocationChurnReturnsAllMemory) {
  constexpr int kRounds = 2000;
  std::vector<void*> live;
  for (int round = 0; round < kRounds; ++round) {
    const int32_t device = round % kDeviceCount;
    const size_t size = 1 + static_cast<size_t>(round * 2654435761u) % 8192;
    void* ptr = nullptr;
    ASSERT_EQ(api_->device_malloc(context_, device, size, &ptr),
              OPENREG_SUCCESS)
        << "round " << round << ": " << api_->last_error_message(context_);
    live.push_back(ptr);
    // Free in a different order than allocated, keeping a few live.
    if (live.size() > 6) {
      const size_t victim = static_cast<size_t>(round) % live.size();
      openreg_pointer_attributes attributes = Attributes(live[victim]);
      ASSERT_EQ(api_->device_free(context_, attributes.device, live[victim]),
                OPENREG_SUCCESS)
          << api_->last_error_message(context_);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(victim));
    }
  }
  for (void* ptr : live) {
    openreg_pointer_attributes attributes = Attributes(ptr);
    EXPECT_EQ(api_->device_free(context_, attributes.device, ptr),
              OPENREG_SUCCESS);
  }
  for (int32_t device = 0; device < kDeviceCount; ++device) {
    EXPECT_EQ(FreeBytes(device), kCapacity) << "device " << device;
  }
}

}  // namespace
}  // namespace openreg::conformance
