// Streams: priorities, handles, FIFO order, exact queries, synchronization
// and destruction, and device_synchronize over all of a device's streams.
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "tests/conformance/driver_fixture.h"
#include "tests/conformance/gate.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(StreamTest, InitializedDriverTest);

openreg_status Succeed(void*) { return OPENREG_SUCCESS; }

openreg_status Count(void* counter) {
  ++*static_cast<std::atomic<int>*>(counter);
  return OPENREG_SUCCESS;
}

// Opens `gates` from another thread after a short delay, so that calls that
// wait for them can be made first; joins on destruction.
class DelayedOpener {
 public:
  explicit DelayedOpener(std::vector<Gate*> gates)
      : thread_([gates] {
          std::this_thread::sleep_for(std::chrono::milliseconds(30));
          for (Gate* gate : gates) gate->Open();
        }) {}
  ~DelayedOpener() { thread_.join(); }

 private:
  std::thread thread_;
};

TEST_P(StreamTest, PrioritiesFollowTheDevicesRange) {
  const openreg_device_properties props = Properties(2);
  for (int32_t priority = props.greatest_stream_priority;
       priority <= props.least_stream_priority; ++priority) {
    openreg_stream stream = nullptr;
    ASSERT_EQ(api_->stream_create(context_, 2, priority, &stream),
              OPENREG_SUCCESS)
        << "priority " << priority << ": "
        << api_->last_error_message(context_);
    EXPECT_NE(stream, nullptr);
    EXPECT_EQ(api_->launch_host_func(context_, stream, Succeed, nullptr),
              OPENREG_SUCCESS);
    EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
    EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  }
  for (int32_t priority :
       {props.least_stream_priority + 1, props.greatest_stream_priority - 1}) {
    openreg_stream stream = nullptr;
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                          api_->stream_create(context_, 2, priority, &stream)))
        << "priority " << priority;
    EXPECT_EQ(stream, nullptr);
  }
}

// What a host function on a stream saw when it asked for its own stream's
// priority: the ABI allows the call from there.
struct PriorityQuery {
  const openreg_driver_api* api;
  openreg_context context;
  openreg_stream stream;
  openreg_status status = OPENREG_ERROR_INTERNAL;
  int32_t priority = 0;
};

openreg_status QueryOwnPriority(void* user_data) {
  auto* query = static_cast<PriorityQuery*>(user_data);
  query->status = query->api->stream_get_priority(query->context, query->stream,
                                                  &query->priority);
  return OPENREG_SUCCESS;
}

// stream_get_priority reports the priority a stream was created
// with, for every priority of every device's range, from any thread.
TEST_P(StreamTest, GetPriorityReportsTheCreationPriority) {
  for (int32_t device = 0; device < kDeviceCount; ++device) {
    const openreg_device_properties props = Properties(device);
    for (int32_t priority = props.greatest_stream_priority;
         priority <= props.least_stream_priority; ++priority) {
      SCOPED_TRACE(testing::Message()
                   << "device " << device << ", priority " << priority);
      openreg_stream stream = NewStream(device, priority);
      int32_t reported = priority + 1;
      ASSERT_EQ(api_->stream_get_priority(context_, stream, &reported),
                OPENREG_SUCCESS)
          << api_->last_error_message(context_);
      EXPECT_EQ(reported, priority);

      PriorityQuery query{api_, context_, stream};
      ASSERT_EQ(
          api_->launch_host_func(context_, stream, QueryOwnPriority, &query),
          OPENREG_SUCCESS)
          << api_->last_error_message(context_);
      ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS)
          << api_->last_error_message(context_);
      EXPECT_EQ(query.status, OPENREG_SUCCESS);
      EXPECT_EQ(query.priority, priority);
      EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
    }
  }
}

TEST_P(StreamTest, GetPriorityRejectsBadArguments) {
  int32_t priority = 0;
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->stream_get_priority(context_, nullptr, &priority)));
  openreg_stream stream = NewStream(0);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_get_priority(context_, stream, nullptr)));
  ASSERT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->stream_get_priority(context_, stream, &priority)));
}

TEST_P(StreamTest, DestroyedStreamsAreRejected) {
  openreg_stream stream = NewStream(0);
  openreg_stream other = NewStream(0);
  EXPECT_NE(stream, other);
  openreg_event event = NewEvent(0, OPENREG_EVENT_DEFAULT);
  ASSERT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_destroy(context_, stream)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_query(context_, stream)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_synchronize(context_, stream)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_wait_event(context_, stream, event)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_record(context_, event, stream)));
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->launch_host_func(context_, stream, Succeed, nullptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_query(context_, nullptr)));
  // The other stream is unaffected.
  EXPECT_EQ(api_->stream_query(context_, other), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, other), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
}

// Each host function reads the device cell that the copy enqueued just
// before it wrote: any reordering of copies and functions shows.
struct FifoTrace {
  const int* cell = nullptr;
  std::vector<int> seen;
};

openreg_status RecordCell(void* user_data) {
  auto* trace = static_cast<FifoTrace*>(user_data);
  trace->seen.push_back(*trace->cell);
  return OPENREG_SUCCESS;
}

TEST_P(StreamTest, WorkRunsInFifoOrder) {
  constexpr int kItems = 300;
  openreg_stream stream = NewStream(0);
  int* cell = static_cast<int*>(DeviceAlloc(0, sizeof(int)));
  // The host function reads the cell where the driver's threads see it.
  FifoTrace trace{ExecutionView(0, cell), {}};
  for (int i = 0; i < kItems; ++i) {
    ASSERT_EQ(api_->memcpy_async(context_, cell, &i, sizeof(i),
                                 OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
              OPENREG_SUCCESS);
    ASSERT_EQ(api_->launch_host_func(context_, stream, RecordCell, &trace),
              OPENREG_SUCCESS);
    if (i % 50 == 0) {
      ASSERT_EQ(api_->memset_async(context_, cell, 0xff, sizeof(int), stream),
                OPENREG_SUCCESS);
      ASSERT_EQ(api_->launch_host_func(context_, stream, RecordCell, &trace),
                OPENREG_SUCCESS);
    }
  }
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  std::vector<int> expected;
  for (int i = 0; i < kItems; ++i) {
    expected.push_back(i);
    if (i % 50 == 0) expected.push_back(-1);
  }
  EXPECT_EQ(trace.seen, expected);
  EXPECT_EQ(api_->device_free(context_, 0, cell), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

// SUCCESS only once the last item has returned: not when the queue is empty
// while it still runs.
TEST_P(StreamTest, QueryIsExact) {
  openreg_stream stream = NewStream(0);
  EXPECT_EQ(api_->stream_query(context_, stream), OPENREG_SUCCESS);
  Gate gate;
  ASSERT_EQ(gate.Launch(api_, context_, stream), OPENREG_SUCCESS);
  if (!gate.finished()) {
    EXPECT_EQ(api_->stream_query(context_, stream), OPENREG_ERROR_NOT_READY);
  }
  // Running, and the only item: the queue is empty now.
  ASSERT_TRUE(gate.AwaitStarted());
  if (!gate.finished()) {
    EXPECT_EQ(api_->stream_query(context_, stream), OPENREG_ERROR_NOT_READY);
  }
  gate.Open();
  for (;;) {
    const openreg_status status = api_->stream_query(context_, stream);
    if (status == OPENREG_SUCCESS) {
      EXPECT_TRUE(gate.finished());
      break;
    }
    ASSERT_EQ(status, OPENREG_ERROR_NOT_READY);
    std::this_thread::yield();
  }
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(StreamTest, SynchronizeWaitsForEverythingEnqueuedBefore) {
  openreg_stream stream = NewStream(1);
  Gate gate;
  ASSERT_EQ(gate.Launch(api_, context_, stream), OPENREG_SUCCESS);
  std::atomic<int> counter{0};
  constexpr int kItems = 10;
  for (int i = 0; i < kItems; ++i) {
    ASSERT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
              OPENREG_SUCCESS);
  }
  {
    DelayedOpener opener({&gate});
    EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
    EXPECT_TRUE(gate.finished());
    EXPECT_EQ(counter.load(), kItems);
  }
  EXPECT_EQ(api_->stream_query(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(StreamTest, DestroyDoesNotWaitAndQueuedWorkStillRuns) {
  openreg_stream stream = NewStream(0);
  Gate gate;
  ASSERT_EQ(gate.Launch(api_, context_, stream), OPENREG_SUCCESS);
  std::atomic<int> counter{0};
  ASSERT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  EXPECT_TRUE(gate.ran_inline() || !gate.finished());
  gate.Open();
  EXPECT_EQ(api_->device_synchronize(context_, 0), OPENREG_SUCCESS);
  EXPECT_TRUE(gate.finished());
  EXPECT_EQ(counter.load(), 1);
}

TEST_P(StreamTest, DeviceSynchronizeWaitsForEveryStreamOfTheDevice) {
  constexpr int kStreams = 3;
  std::vector<openreg_stream> streams;
  std::vector<std::unique_ptr<Gate>> gates;
  std::atomic<int> counter{0};
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(NewStream(0));
    gates.push_back(std::make_unique<Gate>());
    ASSERT_EQ(gates.back()->Launch(api_, context_, streams.back()),
              OPENREG_SUCCESS);
    ASSERT_EQ(api_->launch_host_func(context_, streams.back(), Count, &counter),
              OPENREG_SUCCESS);
  }
  // Including a stream destroyed while its work was queued.
  ASSERT_EQ(api_->stream_destroy(context_, streams.back()), OPENREG_SUCCESS);
  streams.pop_back();
  {
    DelayedOpener opener({gates[0].get(), gates[1].get(), gates[2].get()});
    EXPECT_EQ(api_->device_synchronize(context_, 0), OPENREG_SUCCESS)
        << api_->last_error_message(context_);
    EXPECT_EQ(counter.load(), kStreams);
  }
  for (openreg_stream stream : streams) {
    EXPECT_EQ(api_->stream_query(context_, stream), OPENREG_SUCCESS);
    EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  }
}

TEST_P(StreamTest, DeviceSynchronizeDoesNotWaitForOtherDevices) {
  openreg_stream stream = NewStream(1);
  Gate gate;
  ASSERT_EQ(gate.Launch(api_, context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_synchronize(context_, 0), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_synchronize(context_, 2), OPENREG_SUCCESS);
  EXPECT_TRUE(gate.ran_inline() || !gate.finished());
  gate.Open();
  EXPECT_EQ(api_->device_synchronize(context_, 1), OPENREG_SUCCESS);
  EXPECT_TRUE(gate.finished());
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

}  // namespace
}  // namespace openreg::conformance
