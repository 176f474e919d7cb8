// Many threads calling the driver at once.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/conformance/driver_fixture.h"
#include "tests/conformance/gate.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(ThreadsTest, InitializedDriverTest);

TEST_P(ThreadsTest, LastErrorMessageIsPerThread) {
  void* ptr = nullptr;
  ASSERT_EQ(api_->device_malloc(context_, 7, 1, &ptr),
            OPENREG_ERROR_INVALID_DEVICE);
  const std::string mine = api_->last_error_message(context_);
  std::string theirs;
  std::thread other([&] { theirs = api_->last_error_message(context_); });
  other.join();
  EXPECT_EQ(theirs, "");
  EXPECT_EQ(api_->last_error_message(context_), mine);
}

// Per-thread sequences of host functions on one shared stream.
struct SharedLog {
  std::mutex mu;
  std::vector<std::pair<int, int>> entries;  // (thread, sequence number)
};

struct LogEntry {
  SharedLog* log;
  int thread;
  int sequence;
};

openreg_status Append(void* user_data) {
  auto* entry = static_cast<LogEntry*>(user_data);
  std::lock_guard<std::mutex> lock(entry->log->mu);
  entry->log->entries.emplace_back(entry->thread, entry->sequence);
  return OPENREG_SUCCESS;
}

TEST_P(ThreadsTest, ThreadsSharingAStreamKeepTheirOwnOrder) {
  constexpr int kThreads = 4;
  constexpr int kItems = 200;
  openreg_stream stream = NewStream(0);
  SharedLog log;
  std::vector<std::vector<LogEntry>> entries(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    entries[t].reserve(kItems);
    for (int i = 0; i < kItems; ++i) entries[t].push_back({&log, t, i});
    threads.emplace_back([&, t] {
      for (LogEntry& entry : entries[t]) {
        if (api_->launch_host_func(context_, stream, Append, &entry) !=
            OPENREG_SUCCESS) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(failures.load(), 0);
  ASSERT_EQ(log.entries.size(), static_cast<size_t>(kThreads * kItems));
  std::vector<int> next(kThreads, 0);
  for (const auto& [thread, sequence] : log.entries) {
    EXPECT_EQ(sequence, next[thread]) << "thread " << thread;
    next[thread] = sequence + 1;
  }
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

// Items of one stream never run at the same time, even when several threads
// launch them: a stream is a single queue.
TEST_P(ThreadsTest, ItemsOfOneStreamNeverOverlap) {
  constexpr int kThreads = 4;
  constexpr int kItems = 100;
  openreg_stream stream = NewStream(0);
  struct Overlap {
    std::atomic<int> running{0};
    std::atomic<int> overlaps{0};
  } overlap;
  const openreg_host_fn item = [](void* user_data) -> openreg_status {
    auto* o = static_cast<Overlap*>(user_data);
    if (o->running.fetch_add(1) != 0) ++o->overlaps;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    o->running.fetch_sub(1);
    return OPENREG_SUCCESS;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kItems; ++i) {
        EXPECT_EQ(api_->launch_host_func(context_, stream, item, &overlap),
                  OPENREG_SUCCESS);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(overlap.overlaps.load(), 0);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(ThreadsTest, ManyWaitersAllWakeWhenTheWorkFinishes) {
  openreg_stream stream = NewStream(1);
  openreg_event event = NewEvent(1, OPENREG_EVENT_DEFAULT);
  Gate gate;
  ASSERT_EQ(gate.Launch(api_, context_, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, event, stream), OPENREG_SUCCESS);
  std::atomic<int> successes{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 6; ++i) {
    waiters.emplace_back([&, i] {
      openreg_status status = OPENREG_ERROR_INTERNAL;
      switch (i % 3) {
        case 0:
          status = api_->stream_synchronize(context_, stream);
          break;
        case 1:
          status = api_->event_synchronize(context_, event);
          break;
        case 2:
          status = api_->device_synchronize(context_, 1);
          break;
      }
      if (status == OPENREG_SUCCESS && gate.finished()) ++successes;
    });
  }
  gate.Open();
  for (std::thread& waiter : waiters) waiter.join();
  EXPECT_EQ(successes.load(), 6);
  EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(ThreadsTest, ConcurrentUseKeepsAccountingConsistent) {
  constexpr int kThreads = 4;
  constexpr int kIterations = 100;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, &failures] {
      const int32_t device = t % kDeviceCount;
      openreg_stream stream = nullptr;
      if (api_->stream_create(context_, device, 0, &stream) !=
          OPENREG_SUCCESS) {
        ++failures[t];
        return;
      }
      for (int i = 0; i < kIterations; ++i) {
        // At most 2 blocks of <= 64 KiB per thread stay within capacity.
        const size_t size =
            1 + (static_cast<size_t>(t * 7919 + i * 104729) % (64 * 1024));
        void* a = nullptr;
        void* b = nullptr;
        if (api_->device_malloc(context_, device, size, &a) !=
                OPENREG_SUCCESS ||
            api_->device_malloc(context_, device, size, &b) !=
                OPENREG_SUCCESS) {
          ++failures[t];
          break;
        }
        const std::vector<unsigned char> source =
            Pattern(size, static_cast<unsigned char>(t + i));
        std::vector<unsigned char> result(size);
        openreg_pointer_attributes attributes{};
        attributes.struct_size = sizeof(attributes);
        uint64_t free_bytes = 0;
        uint64_t total_bytes = 0;
        openreg_event event = nullptr;
        float ms = -1;
        const bool ok =
            api_->memcpy_async(context_, a, source.data(), size,
                               OPENREG_MEMCPY_HOST_TO_DEVICE,
                               stream) == OPENREG_SUCCESS &&
            api_->memcpy_async(context_, b, a, size,
                               OPENREG_MEMCPY_DEVICE_TO_DEVICE,
                               stream) == OPENREG_SUCCESS &&
            api_->memcpy_async(context_, result.data(), b, size,
                               OPENREG_MEMCPY_DEVICE_TO_HOST,
                               stream) == OPENREG_SUCCESS &&
            api_->event_create(context_, device, OPENREG_EVENT_ENABLE_TIMING,
                               &event) == OPENREG_SUCCESS &&
            api_->event_record(context_, event, stream) == OPENREG_SUCCESS &&
            api_->stream_synchronize(context_, stream) == OPENREG_SUCCESS &&
            result == source &&
            api_->pointer_get_attributes(context_,
                                         static_cast<char*>(b) + size - 1,
                                         &attributes) == OPENREG_SUCCESS &&
            attributes.base == b && attributes.device == device &&
            api_->mem_get_info(context_, device, &free_bytes, &total_bytes) ==
                OPENREG_SUCCESS &&
            free_bytes <= total_bytes - 2 * size &&
            api_->event_elapsed_time(context_, event, event, &ms) ==
                OPENREG_SUCCESS &&
            ms == 0.0f &&
            api_->event_destroy(context_, event) == OPENREG_SUCCESS;
        if (!ok) ++failures[t];
        if (api_->device_free(context_, device, a) != OPENREG_SUCCESS ||
            api_->device_free(context_, device, b) != OPENREG_SUCCESS) {
          ++failures[t];
        }
      }
      if (api_->stream_destroy(context_, stream) != OPENREG_SUCCESS)
        ++failures[t];
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

}  // namespace
}  // namespace openreg::conformance
