// Several contexts of one driver at once: each has its own devices, memory
// and handles, rejects the handles of the others, and lives on when another
// is destroyed. A 1.x driver behind the loader's adapter has one instance,
// so one context at a time: it lists this suite as unsupported.
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/conformance/driver_fixture.h"
#include "tests/conformance/gate.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(ContextsTest, LoadedDriverTest);

openreg_status Count(void* counter) {
  ++*static_cast<std::atomic<int>*>(counter);
  return OPENREG_SUCCESS;
}

uint64_t FreeBytes(const openreg_driver_api* api, openreg_context context,
                   int32_t device) {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_EQ(api->mem_get_info(context, device, &free_bytes, &total_bytes),
            OPENREG_SUCCESS)
      << api->last_error_message(context);
  return free_bytes;
}

TEST_P(ContextsTest, EachHasItsOwnDevicesAndMemory) {
  const openreg_driver_config one_config = Config(1, kCapacity);
  const openreg_context one = NewContext(&one_config);
  const openreg_driver_config three_config = Config(3, 2 * kCapacity);
  const openreg_context three = NewContext(&three_config);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(three, nullptr);
  ASSERT_NE(one, three);

  int32_t count = 0;
  EXPECT_EQ(api_->get_device_count(one, &count), OPENREG_SUCCESS);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(api_->get_device_count(three, &count), OPENREG_SUCCESS);
  EXPECT_EQ(count, 3);
  void* ptr = nullptr;
  EXPECT_TRUE(FailsWith(one, OPENREG_ERROR_INVALID_DEVICE,
                        api_->device_malloc(one, 2, 64, &ptr)));

  // Filling the device of one leaves the other's untouched.
  void* all_of_one = nullptr;
  ASSERT_EQ(api_->device_malloc(one, 0, kCapacity, &all_of_one),
            OPENREG_SUCCESS)
      << api_->last_error_message(one);
  EXPECT_EQ(FreeBytes(api_, one, 0), 0u);
  EXPECT_EQ(FreeBytes(api_, three, 0), 2 * kCapacity);
  void* all_of_three = nullptr;
  ASSERT_EQ(api_->device_malloc(three, 0, 2 * kCapacity, &all_of_three),
            OPENREG_SUCCESS)
      << api_->last_error_message(three);

  // A pointer is known only to the context that allocated it.
  openreg_pointer_attributes attributes{};
  attributes.struct_size = sizeof(attributes);
  ASSERT_EQ(api_->pointer_get_attributes(three, all_of_one, &attributes),
            OPENREG_SUCCESS)
      << api_->last_error_message(three);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_UNREGISTERED);
  ASSERT_EQ(api_->pointer_get_attributes(one, all_of_one, &attributes),
            OPENREG_SUCCESS)
      << api_->last_error_message(one);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_DEVICE);

  EXPECT_EQ(api_->device_free(one, 0, all_of_one), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(three, 0, all_of_three), OPENREG_SUCCESS);
}

TEST_P(ContextsTest, HandlesOfAnotherContextAreRejected) {
  Handles mine;
  Handles theirs;
  const openreg_context context = NewContextWithHandles(mine);
  const openreg_context other = NewContextWithHandles(theirs);
  ASSERT_NE(context, nullptr);
  ASSERT_NE(other, nullptr);
  auto rejects = [&](openreg_status status) {
    return FailsWith(context, OPENREG_ERROR_INVALID_ARGUMENT, status);
  };

  EXPECT_TRUE(rejects(api_->stream_query(context, theirs.stream)));
  EXPECT_TRUE(rejects(api_->stream_synchronize(context, theirs.stream)));
  int32_t priority = 0;
  EXPECT_TRUE(
      rejects(api_->stream_get_priority(context, theirs.stream, &priority)));
  EXPECT_TRUE(
      rejects(api_->stream_wait_event(context, mine.stream, theirs.event)));
  EXPECT_TRUE(
      rejects(api_->stream_wait_event(context, theirs.stream, mine.event)));
  EXPECT_TRUE(rejects(api_->event_query(context, theirs.event)));
  EXPECT_TRUE(rejects(api_->event_synchronize(context, theirs.event)));
  EXPECT_TRUE(rejects(api_->event_record(context, theirs.event, mine.stream)));
  EXPECT_TRUE(rejects(api_->event_record(context, mine.event, theirs.stream)));
  float ms = 0;
  ASSERT_EQ(api_->stream_synchronize(context, mine.stream), OPENREG_SUCCESS);
  EXPECT_TRUE(rejects(
      api_->event_elapsed_time(context, mine.event, theirs.event, &ms)));
  std::atomic<int> ran{0};
  EXPECT_TRUE(
      rejects(api_->launch_host_func(context, theirs.stream, Count, &ran)));
  char host[64] = {};
  EXPECT_TRUE(rejects(api_->memcpy_async(context, host, mine.device_ptr, 16,
                                         OPENREG_MEMCPY_DEVICE_TO_HOST,
                                         theirs.stream)));
  EXPECT_TRUE(rejects(api_->memcpy_async(context, host, theirs.device_ptr, 16,
                                         OPENREG_MEMCPY_DEVICE_TO_HOST,
                                         mine.stream)));
  EXPECT_TRUE(
      rejects(api_->memset_async(context, theirs.device_ptr, 0, 16,
                                 mine.stream)));
  EXPECT_TRUE(rejects(api_->device_free(context, 0, theirs.device_ptr)));
  EXPECT_TRUE(rejects(api_->host_free(context, theirs.host_ptr)));
  EXPECT_TRUE(rejects(api_->event_destroy(context, theirs.event)));
  EXPECT_TRUE(rejects(api_->stream_destroy(context, theirs.stream)));

  // Nothing of the other context was touched: its handles all still work.
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(api_->launch_host_func(other, theirs.stream, Count, &ran),
            OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_record(other, theirs.event, theirs.stream),
            OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_synchronize(other, theirs.event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(other, theirs.stream), OPENREG_SUCCESS);
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(api_->event_destroy(other, theirs.event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(other, theirs.stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(other, 0, theirs.device_ptr), OPENREG_SUCCESS);
  EXPECT_EQ(api_->host_free(other, theirs.host_ptr), OPENREG_SUCCESS);
}

TEST_P(ContextsTest, DestroyingOneLeavesAnotherWorking) {
  Handles doomed;
  Handles survivor;
  const openreg_context doomed_context = NewContextWithHandles(doomed);
  const openreg_context context = NewContextWithHandles(survivor);
  ASSERT_NE(doomed_context, nullptr);
  ASSERT_NE(context, nullptr);

  // The doomed context goes with a host function running and work queued
  // behind it, so destruction has something to wait for and to drop.
  Gate gate;
  ASSERT_EQ(gate.Launch(api_, doomed_context, doomed.stream), OPENREG_SUCCESS);
  std::atomic<int> dropped{0};
  ASSERT_EQ(
      api_->launch_host_func(doomed_context, doomed.stream, Count, &dropped),
      OPENREG_SUCCESS);
  std::thread opener([&gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gate.Open();
  });
  EXPECT_EQ(DestroyContext(doomed_context), OPENREG_SUCCESS)
      << api_->last_error_message(nullptr);
  opener.join();

  // The survivor's memory, streams, events and host functions all work.
  const std::vector<unsigned char> sent = Pattern(64, 3);
  std::vector<unsigned char> received(64, 0);
  std::atomic<int> ran{0};
  ASSERT_EQ(api_->memcpy_async(context, survivor.device_ptr, sent.data(), 64,
                               OPENREG_MEMCPY_HOST_TO_DEVICE, survivor.stream),
            OPENREG_SUCCESS)
      << api_->last_error_message(context);
  ASSERT_EQ(api_->launch_host_func(context, survivor.stream, Count, &ran),
            OPENREG_SUCCESS)
      << api_->last_error_message(context);
  ASSERT_EQ(api_->event_record(context, survivor.event, survivor.stream),
            OPENREG_SUCCESS)
      << api_->last_error_message(context);
  ASSERT_EQ(api_->memcpy_async(context, received.data(), survivor.device_ptr,
                               64, OPENREG_MEMCPY_DEVICE_TO_HOST,
                               survivor.stream),
            OPENREG_SUCCESS)
      << api_->last_error_message(context);
  EXPECT_EQ(api_->event_synchronize(context, survivor.event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(context, survivor.stream),
            OPENREG_SUCCESS);
  EXPECT_EQ(received, sent);
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(FreeBytes(api_, context, 0), kCapacity - 64);
  EXPECT_EQ(api_->event_destroy(context, survivor.event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context, survivor.stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(context, 0, survivor.device_ptr),
            OPENREG_SUCCESS);
  EXPECT_EQ(api_->host_free(context, survivor.host_ptr), OPENREG_SUCCESS);
}

TEST_P(ContextsTest, CanBeUsedFromSeveralThreadsAtOnce) {
  // Each thread its own context, all working at the same time.
  constexpr int kThreads = 4;
  constexpr int kRounds = 20;
  std::vector<openreg_context> contexts;
  for (int i = 0; i < kThreads; ++i) {
    const openreg_driver_config config = Config(1, kCapacity);
    contexts.push_back(NewContext(&config));
    ASSERT_NE(contexts.back(), nullptr);
  }
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const openreg_context context = contexts[t];
      openreg_stream stream = nullptr;
      void* device = nullptr;
      if (api_->stream_create(context, 0, 0, &stream) != OPENREG_SUCCESS ||
          api_->device_malloc(context, 0, 256, &device) != OPENREG_SUCCESS) {
        ++failures[t];
        return;
      }
      for (int round = 0; round < kRounds; ++round) {
        const std::vector<unsigned char> sent =
            Pattern(256, static_cast<unsigned char>(t * kRounds + round));
        std::vector<unsigned char> received(256, 0);
        if (api_->memcpy_async(context, device, sent.data(), 256,
                               OPENREG_MEMCPY_HOST_TO_DEVICE,
                               stream) != OPENREG_SUCCESS ||
            api_->memcpy_async(context, received.data(), device, 256,
                               OPENREG_MEMCPY_DEVICE_TO_HOST,
                               stream) != OPENREG_SUCCESS ||
            received != sent) {
          ++failures[t];
        }
      }
      if (api_->stream_destroy(context, stream) != OPENREG_SUCCESS ||
          api_->device_free(context, 0, device) != OPENREG_SUCCESS) {
        ++failures[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
  }
}

}  // namespace
}  // namespace openreg::conformance
