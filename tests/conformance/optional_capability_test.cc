// Optional tier: behaviour a driver promises only when it advertises the
// capability in its device properties. A driver that does not advertise it
// skips the test, with the reason, instead of failing it.
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
  ASSERT_EQ(held.Launch(api_, context_, held_stream), OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  if (!held.ran_inline()) {
    ASSERT_TRUE(held.AwaitStarted());
  }
  ASSERT_EQ(api_->launch_host_func(context_, other_stream, OpenGate, &held),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  EXPECT_EQ(api_->stream_synchronize(context_, held_stream), OPENREG_SUCCESS)
      << "the gate on the first stream was never opened by the second "
         "stream: their work did not run concurrently";
  EXPECT_EQ(api_->stream_synchronize(context_, other_stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, held_stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, other_stream), OPENREG_SUCCESS);
}

}  // namespace
}  // namespace openreg::conformance
