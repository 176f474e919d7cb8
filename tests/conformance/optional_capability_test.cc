// Optional tier: behaviour a driver promises only when it advertises the
// capability, in its device properties or by providing an optional function
// of a later minor ABI version. A driver that does not advertise it skips the
// test, with the reason, instead of failing it.
#include <cstdint>

#include "tests/conformance/driver_fixture.h"
#include "tests/conformance/gate.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(OptionalCapabilityTest, InitializedDriverTest);

openreg_status OpenGate(void* gate) {
  static_cast<Gate*>(gate)->Open();
  return OPENREG_SUCCESS;
}

// concurrent_streams > 1 promises that work of different streams can run at
// the same time: a host function on one stream can release one that is
// blocked on another. A driver that serializes them while advertising more
// leaves the gate to its safety timeout, which fails the first stream.
TEST_P(OptionalCapabilityTest, StreamsRunConcurrentlyWhenAdvertised) {
  const openreg_device_properties props = Properties(0);
  if (props.concurrent_streams < 2) {
    GTEST_SKIP() << "device 0 advertises concurrent_streams = "
                 << props.concurrent_streams
                 << ", so work of different streams need not overlap";
  }
  openreg_stream held_stream = NewStream(0);
  openreg_stream other_stream = NewStream(0);
  Gate held;
  ASSERT_EQ(held.Launch(api_, held_stream), OPENREG_SUCCESS)
      << api_->last_error_message();
  if (!held.ran_inline()) {
    ASSERT_TRUE(held.AwaitStarted());
  }
  ASSERT_EQ(api_->launch_host_func(other_stream, OpenGate, &held),
            OPENREG_SUCCESS)
      << api_->last_error_message();
  EXPECT_EQ(api_->stream_synchronize(held_stream), OPENREG_SUCCESS)
      << "the gate on the first stream was never opened by the second "
         "stream: their work did not run concurrently";
  EXPECT_EQ(api_->stream_synchronize(other_stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(held_stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(other_stream), OPENREG_SUCCESS);
}

// What a host function on a stream saw when it asked for its own stream's
// priority: the ABI allows the call from there.
struct PriorityQuery {
  const openreg_driver_api* api;
  openreg_stream stream;
  openreg_status status = OPENREG_ERROR_INTERNAL;
  int32_t priority = 0;
};

openreg_status QueryOwnPriority(void* user_data) {
  auto* query = static_cast<PriorityQuery*>(user_data);
  query->status =
      query->api->stream_get_priority(query->stream, &query->priority);
  return OPENREG_SUCCESS;
}

// stream_get_priority (ABI 1.1) reports the priority a stream was created
// with, for every priority of every device's range, from any thread.
TEST_P(OptionalCapabilityTest, StreamGetPriorityReportsTheCreationPriority) {
  if (api_->struct_size < OPENREG_DRIVER_API_STRUCT_SIZE_V1_1) {
    GTEST_SKIP() << "the driver implements ABI 1." << api_->abi_version_minor
                 << " (a table of " << api_->struct_size
                 << " bytes); stream_get_priority was added in 1.1";
  }
  if (api_->stream_get_priority == nullptr) {
    GTEST_SKIP() << "the driver leaves the optional stream_get_priority NULL";
  }
  for (int32_t device = 0; device < kDeviceCount; ++device) {
    const openreg_device_properties props = Properties(device);
    for (int32_t priority = props.greatest_stream_priority;
         priority <= props.least_stream_priority; ++priority) {
      SCOPED_TRACE(testing::Message() << "device " << device << ", priority "
                                      << priority);
      openreg_stream stream = NewStream(device, priority);
      int32_t reported = priority + 1;
      ASSERT_EQ(api_->stream_get_priority(stream, &reported), OPENREG_SUCCESS)
          << api_->last_error_message();
      EXPECT_EQ(reported, priority);

      PriorityQuery query{api_, stream};
      ASSERT_EQ(api_->launch_host_func(stream, QueryOwnPriority, &query),
                OPENREG_SUCCESS)
          << api_->last_error_message();
      ASSERT_EQ(api_->stream_synchronize(stream), OPENREG_SUCCESS)
          << api_->last_error_message();
      EXPECT_EQ(query.status, OPENREG_SUCCESS);
      EXPECT_EQ(query.priority, priority);
      EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
    }
  }
}

TEST_P(OptionalCapabilityTest, StreamGetPriorityRejectsBadArguments) {
  if (api_->struct_size < OPENREG_DRIVER_API_STRUCT_SIZE_V1_1 ||
      api_->stream_get_priority == nullptr) {
    GTEST_SKIP() << "the driver does not offer stream_get_priority (ABI 1."
                 << api_->abi_version_minor << ", a table of "
                 << api_->struct_size << " bytes)";
  }
  int32_t priority = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_get_priority(nullptr, &priority)));
  openreg_stream stream = NewStream(0);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_get_priority(stream, nullptr)));
  ASSERT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_get_priority(stream, &priority)));
}

}  // namespace
}  // namespace openreg::conformance
