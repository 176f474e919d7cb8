// Activity recording (ABI 2.2, optional): a driver that has the group
// reports every item enqueued while a sink is set, once, after it finished,
// with its stream, device, kind, times from its own clock, the correlation id
// the enqueueing thread set, and for copies and memsets their direction and
// bytes; it reports nothing enqueued while no sink is set, and nothing once
// activity_enable(NULL) returned. A driver without the group skips these
// tests: profiling then shows CPU-side events only.
#include <algorithm>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tests/conformance/driver_fixture.h"

namespace openreg::conformance {
namespace {

// Collects the records a driver delivers, from any of its threads.
class RecordSink {
 public:
  static void Receive(void* user_data, const openreg_activity_record* record) {
    auto* sink = static_cast<RecordSink*>(user_data);
    absl::MutexLock lock(&sink->mu_);
    sink->records_.push_back(*record);
  }
  std::vector<openreg_activity_record> records() const {
    absl::MutexLock lock(&mu_);
    return records_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<openreg_activity_record> records_ ABSL_GUARDED_BY(mu_);
};

openreg_status Succeed(void*) { return OPENREG_SUCCESS; }

class ActivityFixture : public InitializedDriverTest {
 protected:
  void SetUp() override {
    InitializedDriverTest::SetUp();
    if (!openreg_driver_has_activity_recording(api_)) {
      GTEST_SKIP() << "the driver does not implement the optional 2.2 "
                      "activity-recording group (activity_enable, "
                      "activity_set_correlation_id, activity_get_timestamp); "
                      "profilers show only CPU-side events for it";
    }
  }

  void Enable(RecordSink* sink) {
    ASSERT_EQ(api_->activity_enable(context_, &RecordSink::Receive, sink),
              OPENREG_SUCCESS)
        << api_->last_error_message(context_);
  }
  void Disable() {
    ASSERT_EQ(api_->activity_enable(context_, nullptr, nullptr),
              OPENREG_SUCCESS)
        << api_->last_error_message(context_);
  }
  void SetCorrelation(uint64_t id) {
    ASSERT_EQ(api_->activity_set_correlation_id(context_, id), OPENREG_SUCCESS)
        << api_->last_error_message(context_);
  }
  uint64_t Now() {
    uint64_t now = 0;
    EXPECT_EQ(api_->activity_get_timestamp(context_, &now), OPENREG_SUCCESS)
        << api_->last_error_message(context_);
    return now;
  }
  void Launch(openreg_stream stream) {
    ASSERT_EQ(api_->launch_host_func(context_, stream, &Succeed, nullptr),
              OPENREG_SUCCESS)
        << api_->last_error_message(context_);
  }
  void Sync(openreg_stream stream) {
    ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS)
        << api_->last_error_message(context_);
  }
};

OPENREG_CONFORMANCE_SUITE(ActivityTest, ActivityFixture);

TEST_P(ActivityTest, ClockIsMonotonicAndArgumentsAreChecked) {
  const uint64_t first = Now();
  const uint64_t second = Now();
  EXPECT_LE(first, second);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->activity_get_timestamp(context_, nullptr)));
}

TEST_P(ActivityTest, EveryKindOfItemIsReportedOnceWithItsDetails) {
  constexpr size_t kBytes = 512;
  openreg_stream stream = NewStream(1);
  openreg_stream waiter = NewStream(1);
  openreg_event event = NewEvent(1, OPENREG_EVENT_DEFAULT);
  void* device = DeviceAlloc(1, kBytes);
  void* pinned = PinnedAlloc(kBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(pinned, nullptr);
  RecordSink sink;
  Enable(&sink);
  SetCorrelation(42);
  const uint64_t before = Now();
  Launch(stream);
  ASSERT_EQ(api_->memcpy_async(context_, device, pinned, kBytes,
                               OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->memset_async(context_, device, 3, kBytes / 2, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, event, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_wait_event(context_, waiter, event), OPENREG_SUCCESS);
  Sync(stream);
  Sync(waiter);
  const uint64_t after = Now();
  Disable();
  SetCorrelation(0);

  const std::vector<openreg_activity_record> records = sink.records();
  ASSERT_EQ(records.size(), 5u);
  std::vector<int32_t> kinds;
  for (const openreg_activity_record& record : records) {
    SCOPED_TRACE(testing::Message() << "record of kind " << record.kind);
    kinds.push_back(record.kind);
    EXPECT_GE(record.struct_size, OPENREG_ACTIVITY_RECORD_STRUCT_SIZE_V2_2);
    EXPECT_EQ(record.device, 1);
    EXPECT_EQ(record.correlation_id, 42u);
    EXPECT_LE(before, record.start_ns);
    EXPECT_LE(record.start_ns, record.end_ns);
    EXPECT_LE(record.end_ns, after);
    EXPECT_EQ(record.stream,
              record.kind == OPENREG_ACTIVITY_EVENT_WAIT ? waiter : stream);
    if (record.kind == OPENREG_ACTIVITY_MEMCPY) {
      EXPECT_EQ(record.memcpy_kind, OPENREG_MEMCPY_HOST_TO_DEVICE);
      EXPECT_EQ(record.bytes, kBytes);
    } else if (record.kind == OPENREG_ACTIVITY_MEMSET) {
      EXPECT_EQ(record.memcpy_kind, -1);
      EXPECT_EQ(record.bytes, kBytes / 2);
    } else {
      EXPECT_EQ(record.memcpy_kind, -1);
      EXPECT_EQ(record.bytes, 0u);
    }
  }
  std::sort(kinds.begin(), kinds.end());
  EXPECT_EQ(kinds, (std::vector<int32_t>{
                       OPENREG_ACTIVITY_HOST_FUNCTION, OPENREG_ACTIVITY_MEMCPY,
                       OPENREG_ACTIVITY_MEMSET, OPENREG_ACTIVITY_EVENT_RECORD,
                       OPENREG_ACTIVITY_EVENT_WAIT}));
  EXPECT_EQ(api_->host_free(context_, pinned), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(context_, 1, device), OPENREG_SUCCESS);
}

// The wait is reported even when the record it waits for has already
// completed, and even when the event was never recorded: a driver may skip
// the waiting, not the report. The test above meets that case only when the
// driver happens to finish the record first.
TEST_P(ActivityTest, AWaitWithNothingToWaitForIsReportedToo) {
  openreg_stream stream = NewStream(0);
  openreg_stream waiter = NewStream(0);
  openreg_event recorded = NewEvent(0, OPENREG_EVENT_DEFAULT);
  openreg_event never_recorded = NewEvent(0, OPENREG_EVENT_DEFAULT);
  ASSERT_EQ(api_->event_record(context_, recorded, stream), OPENREG_SUCCESS);
  Sync(stream);
  RecordSink sink;
  Enable(&sink);
  ASSERT_EQ(api_->stream_wait_event(context_, waiter, recorded),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_wait_event(context_, waiter, never_recorded),
            OPENREG_SUCCESS);
  Sync(waiter);
  Disable();
  const std::vector<openreg_activity_record> records = sink.records();
  ASSERT_EQ(records.size(), 2u);
  for (const openreg_activity_record& record : records) {
    EXPECT_EQ(record.kind, OPENREG_ACTIVITY_EVENT_WAIT);
    EXPECT_EQ(record.stream, waiter);
  }
}

TEST_P(ActivityTest, ItemsOfOneStreamDoNotOverlapAndKeepStreamOrder) {
  openreg_stream stream = NewStream(0);
  RecordSink sink;
  Enable(&sink);
  for (int i = 0; i < 20; ++i) Launch(stream);
  Sync(stream);
  Disable();
  const std::vector<openreg_activity_record> records = sink.records();
  ASSERT_EQ(records.size(), 20u);
  for (size_t i = 1; i < records.size(); ++i) {
    EXPECT_LE(records[i - 1].end_ns, records[i].start_ns) << "item " << i;
  }
}

TEST_P(ActivityTest, NothingIsReportedWhileOffOrAfterDisabling) {
  openreg_stream stream = NewStream(0);
  Launch(stream);  // before any sink: never reported
  Sync(stream);
  RecordSink sink;
  Enable(&sink);
  Launch(stream);
  Sync(stream);
  Disable();
  Launch(stream);  // after activity_enable(NULL) returned
  Sync(stream);
  EXPECT_EQ(sink.records().size(), 1u);
}

TEST_P(ActivityTest, ANewSinkReplacesTheOld) {
  openreg_stream stream = NewStream(0);
  RecordSink first;
  RecordSink second;
  Enable(&first);
  Launch(stream);
  Sync(stream);
  Enable(&second);
  Launch(stream);
  Launch(stream);
  Sync(stream);
  Disable();
  EXPECT_EQ(first.records().size(), 1u);
  EXPECT_EQ(second.records().size(), 2u);
}

// The id belongs to the thread that enqueues: two threads launching on one
// stream each see their own, and 0 (the initial value) means none.
TEST_P(ActivityTest, CorrelationIdsArePerThread) {
  openreg_stream stream = NewStream(0);
  RecordSink sink;
  Enable(&sink);
  Launch(stream);  // this thread never set an id: 0
  auto launch_with = [&](uint64_t id) {
    SetCorrelation(id);
    for (int i = 0; i < 5; ++i) Launch(stream);
    SetCorrelation(0);
  };
  std::thread a(launch_with, 7);
  std::thread b(launch_with, 9);
  a.join();
  b.join();
  Sync(stream);
  Disable();
  int counts[3] = {0, 0, 0};
  for (const openreg_activity_record& record : sink.records()) {
    switch (record.correlation_id) {
      case 0:
        ++counts[0];
        break;
      case 7:
        ++counts[1];
        break;
      case 9:
        ++counts[2];
        break;
      default:
        ADD_FAILURE() << "unexpected id " << record.correlation_id;
    }
  }
  EXPECT_EQ(counts[0], 1);
  EXPECT_EQ(counts[1], 5);
  EXPECT_EQ(counts[2], 5);
}

TEST_P(ActivityTest, ANullContextIsRejected) {
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->activity_enable(nullptr, &RecordSink::Receive, nullptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->activity_set_correlation_id(nullptr, 1)));
  uint64_t now = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->activity_get_timestamp(nullptr, &now)));
}

}  // namespace
}  // namespace openreg::conformance
