// Events: completion, ordering between streams and devices, which record a
// wait refers to, timing, and the arguments they reject.
#include <atomic>
#include <chrono>
#include <thread>

#include "tests/conformance/driver_fixture.h"
#include "tests/conformance/gate.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(EventTest, InitializedDriverTest);

// Records, when it runs, whether `gate` had finished by then.
struct GateObserver {
  const Gate* gate = nullptr;
  std::atomic<bool> ran{false};
  std::atomic<bool> saw_gate_finished{false};
};

openreg_status ObserveGate(void* user_data) {
  auto* observer = static_cast<GateObserver*>(user_data);
  observer->saw_gate_finished = observer->gate->finished();
  observer->ran = true;
  return OPENREG_SUCCESS;
}

openreg_status Sleep20Milliseconds(void*) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return OPENREG_SUCCESS;
}

TEST_P(EventTest, UnrecordedEventIsCompleteAndWaitingOnItIsANoOp) {
  openreg_stream stream = NewStream(1);
  openreg_event event = NewEvent(0, OPENREG_EVENT_DEFAULT);
  EXPECT_EQ(api_->event_query(context_, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_synchronize(context_, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_wait_event(context_, stream, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(EventTest, EventCompletesWhenEverythingBeforeItsRecordHasRun) {
  openreg_stream stream = NewStream(0);
  openreg_event event = NewEvent(0, OPENREG_EVENT_DEFAULT);
  Gate gate;
  ASSERT_EQ(gate.Launch(api_, context_, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, event, stream), OPENREG_SUCCESS);
  if (!gate.finished()) {
    EXPECT_EQ(api_->event_query(context_, event), OPENREG_ERROR_NOT_READY);
  }
  gate.Open();
  EXPECT_EQ(api_->event_synchronize(context_, event), OPENREG_SUCCESS);
  EXPECT_TRUE(gate.finished());
  EXPECT_EQ(api_->event_query(context_, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

// Work after stream_wait_event on one stream runs only after the work before
// the record on another stream, on the same device or another one.
TEST_P(EventTest, WaitOrdersAnotherStreamOnAnyDevice) {
  for (int32_t waiter_device : {0, 2}) {
    SCOPED_TRACE(waiter_device);
    openreg_stream producer = NewStream(0);
    openreg_stream consumer = NewStream(waiter_device);
    openreg_event event = NewEvent(0, OPENREG_EVENT_DEFAULT);
    Gate gate;
    GateObserver observer{&gate};
    ASSERT_EQ(gate.Launch(api_, context_, producer), OPENREG_SUCCESS);
    ASSERT_EQ(api_->event_record(context_, event, producer), OPENREG_SUCCESS);
    ASSERT_EQ(api_->stream_wait_event(context_, consumer, event),
              OPENREG_SUCCESS);
    ASSERT_EQ(
        api_->launch_host_func(context_, consumer, ObserveGate, &observer),
        OPENREG_SUCCESS);
    if (!gate.finished()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      EXPECT_FALSE(observer.ran.load());
      EXPECT_EQ(api_->stream_query(context_, consumer),
                OPENREG_ERROR_NOT_READY);
    }
    gate.Open();
    EXPECT_EQ(api_->stream_synchronize(context_, consumer), OPENREG_SUCCESS);
    EXPECT_TRUE(observer.ran.load());
    EXPECT_TRUE(observer.saw_gate_finished.load());
    EXPECT_EQ(api_->stream_synchronize(context_, producer), OPENREG_SUCCESS);
    EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
    EXPECT_EQ(api_->stream_destroy(context_, producer), OPENREG_SUCCESS);
    EXPECT_EQ(api_->stream_destroy(context_, consumer), OPENREG_SUCCESS);
  }
}

// A wait refers to the record that was latest when stream_wait_event was
// called: a later record that completes at once does not release it.
TEST_P(EventTest, LaterRecordDoesNotReleaseAnEarlierWait) {
  openreg_stream slow = NewStream(0);
  openreg_stream fast = NewStream(0);
  openreg_stream waiter = NewStream(1);
  openreg_event event = NewEvent(0, OPENREG_EVENT_DEFAULT);
  Gate gate;
  GateObserver observer{&gate};
  ASSERT_EQ(gate.Launch(api_, context_, slow), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, event, slow), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_wait_event(context_, waiter, event), OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, waiter, ObserveGate, &observer),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, event, fast), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(context_, fast), OPENREG_SUCCESS);
  if (!gate.finished()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(observer.ran.load());
  }
  gate.Open();
  EXPECT_EQ(api_->stream_synchronize(context_, waiter), OPENREG_SUCCESS);
  EXPECT_TRUE(observer.saw_gate_finished.load());
  EXPECT_EQ(api_->device_synchronize(context_, 0), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
  for (openreg_stream stream : {slow, fast, waiter}) {
    EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  }
}

// ... and a later record that is still pending does not hold it back. The
// later record's stream is held by a gate on another device (through a
// second event), so the test needs no second execution slot on device 0.
TEST_P(EventTest, LaterRecordDoesNotDelayAnEarlierWait) {
  openreg_stream first = NewStream(0);
  openreg_stream waiter = NewStream(0);
  openreg_stream second = NewStream(0);
  openreg_stream holder = NewStream(1);
  openreg_event event = NewEvent(0, OPENREG_EVENT_DEFAULT);
  openreg_event held = NewEvent(1, OPENREG_EVENT_DEFAULT);
  Gate first_gate;
  Gate second_gate;
  GateObserver observer{&first_gate};
  ASSERT_EQ(first_gate.Launch(api_, context_, first), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, event, first), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_wait_event(context_, waiter, event), OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, waiter, ObserveGate, &observer),
            OPENREG_SUCCESS);
  ASSERT_EQ(second_gate.Launch(api_, context_, holder), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, held, holder), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_wait_event(context_, second, held), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, event, second), OPENREG_SUCCESS);
  first_gate.Open();
  EXPECT_EQ(api_->stream_synchronize(context_, waiter), OPENREG_SUCCESS);
  EXPECT_TRUE(observer.saw_gate_finished.load());
  if (!second_gate.finished()) {
    // The waiter ran while the latest record was still pending.
    EXPECT_EQ(api_->event_query(context_, event), OPENREG_ERROR_NOT_READY);
  }
  second_gate.Open();
  EXPECT_EQ(api_->event_synchronize(context_, event), OPENREG_SUCCESS);
  EXPECT_TRUE(second_gate.finished());
  EXPECT_EQ(api_->device_synchronize(context_, 0), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_synchronize(context_, 1), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, held), OPENREG_SUCCESS);
  for (openreg_stream stream : {first, waiter, second, holder}) {
    EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  }
}

TEST_P(EventTest, DestroyingAnEventDoesNotDisturbQueuedRecordsAndWaits) {
  openreg_stream producer = NewStream(0);
  openreg_stream consumer = NewStream(0);
  openreg_event event = NewEvent(0, OPENREG_EVENT_DEFAULT);
  Gate gate;
  GateObserver observer{&gate};
  ASSERT_EQ(gate.Launch(api_, context_, producer), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, event, producer), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_wait_event(context_, consumer, event),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, consumer, ObserveGate, &observer),
            OPENREG_SUCCESS);
  gate.Open();
  EXPECT_EQ(api_->stream_synchronize(context_, consumer), OPENREG_SUCCESS);
  EXPECT_TRUE(observer.saw_gate_finished.load());
  EXPECT_EQ(api_->stream_destroy(context_, producer), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, consumer), OPENREG_SUCCESS);
}

TEST_P(EventTest, ElapsedTimeBetweenTimingEvents) {
  openreg_stream stream = NewStream(0);
  openreg_event start = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event end = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  ASSERT_EQ(api_->event_record(context_, start, stream), OPENREG_SUCCESS);
  ASSERT_EQ(
      api_->launch_host_func(context_, stream, Sleep20Milliseconds, nullptr),
      OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, end, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_synchronize(context_, end), OPENREG_SUCCESS);
  float ms = -1;
  ASSERT_EQ(api_->event_elapsed_time(context_, start, end, &ms),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  EXPECT_GE(ms, 19.0f);
  EXPECT_LT(ms, 10000.0f);
  float reverse = 1;
  ASSERT_EQ(api_->event_elapsed_time(context_, end, start, &reverse),
            OPENREG_SUCCESS);
  EXPECT_FLOAT_EQ(reverse, -ms);
  float same = -1;
  ASSERT_EQ(api_->event_elapsed_time(context_, end, end, &same),
            OPENREG_SUCCESS);
  EXPECT_EQ(same, 0.0f);
  EXPECT_EQ(api_->event_destroy(context_, start), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, end), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(EventTest, ElapsedTimeAcrossDevices) {
  openreg_stream stream0 = NewStream(0);
  openreg_stream stream1 = NewStream(1);
  openreg_event start = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event end = NewEvent(1, OPENREG_EVENT_ENABLE_TIMING);
  ASSERT_EQ(api_->event_record(context_, start, stream0), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_wait_event(context_, stream1, start), OPENREG_SUCCESS);
  ASSERT_EQ(
      api_->launch_host_func(context_, stream1, Sleep20Milliseconds, nullptr),
      OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, end, stream1), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_synchronize(context_, end), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_synchronize(context_, start), OPENREG_SUCCESS);
  float ms = -1;
  ASSERT_EQ(api_->event_elapsed_time(context_, start, end, &ms),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  EXPECT_GE(ms, 19.0f);
  EXPECT_EQ(api_->event_destroy(context_, start), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, end), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream0), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream1), OPENREG_SUCCESS);
}

TEST_P(EventTest, ElapsedTimeIsNotReadyUntilBothRecordsCompleted) {
  openreg_stream stream = NewStream(0);
  openreg_event start = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event end = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  ASSERT_EQ(api_->event_record(context_, start, stream), OPENREG_SUCCESS);
  Gate gate;
  ASSERT_EQ(gate.Launch(api_, context_, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, end, stream), OPENREG_SUCCESS);
  float ms = -1;
  if (!gate.finished()) {
    EXPECT_EQ(api_->event_elapsed_time(context_, start, end, &ms),
              OPENREG_ERROR_NOT_READY);
  }
  gate.Open();
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_elapsed_time(context_, start, end, &ms),
            OPENREG_SUCCESS);
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(api_->event_destroy(context_, start), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, end), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(EventTest, ElapsedTimeNeedsRecordedTimingEvents) {
  openreg_stream stream = NewStream(0);
  openreg_event timing = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event plain = NewEvent(0, OPENREG_EVENT_DEFAULT);
  openreg_event unrecorded = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  ASSERT_EQ(api_->event_record(context_, timing, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, plain, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  float ms = 0;
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->event_elapsed_time(context_, plain, timing, &ms)));
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->event_elapsed_time(context_, timing, plain, &ms)));
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->event_elapsed_time(context_, timing, unrecorded, &ms)));
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->event_elapsed_time(context_, unrecorded, timing, &ms)));
  EXPECT_EQ(api_->event_destroy(context_, timing), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, plain), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, unrecorded), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(EventTest, EventRecordRequiresTheEventsDevice) {
  openreg_stream stream = NewStream(1);
  openreg_event event = NewEvent(0, OPENREG_EVENT_DEFAULT);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_record(context_, event, stream)));
  EXPECT_EQ(api_->event_query(context_, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(EventTest, UnknownEventFlagsAreNotSupported) {
  openreg_event event = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_SUPPORTED,
                        api_->event_create(context_, 0, 0x5, &event)));
  EXPECT_EQ(event, nullptr);
}

TEST_P(EventTest, DestroyedEventsAreRejected) {
  openreg_stream stream = NewStream(0);
  openreg_event event = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event live = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  ASSERT_EQ(api_->event_record(context_, live, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
  float ms = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_destroy(context_, event)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_query(context_, event)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_synchronize(context_, event)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_record(context_, event, stream)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_wait_event(context_, stream, event)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_elapsed_time(context_, live, event, &ms)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_query(context_, nullptr)));
  EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, live), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

}  // namespace
}  // namespace openreg::conformance
