// launch_host_func: ordering with copies, calling the driver from a host
// function, and failures, which a driver reports either from the launch
// (synchronous drivers) or once, at the next query or synchronize of the
// stream or its device (asynchronous ones).
#include <atomic>
#include <cstring>
#include <thread>

#include "tests/conformance/driver_fixture.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(HostFunctionTest, InitializedDriverTest);

openreg_status ReturnInvalidDevice(void*) {
  return OPENREG_ERROR_INVALID_DEVICE;
}

openreg_status Count(void* counter) {
  ++*static_cast<std::atomic<int>*>(counter);
  return OPENREG_SUCCESS;
}

TEST_P(HostFunctionTest, SeesTheResultOfEarlierCopies) {
  openreg_stream stream = NewStream(0);
  char* device = static_cast<char*>(DeviceAlloc(0, 8));
  const char message[8] = "openreg";
  ASSERT_EQ(api_->memcpy_async(context_, device, message, sizeof(message),
                               OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  struct Check {
    const char* device;
    std::atomic<bool> saw_message{false};
  } check{ExecutionView(0, device)};  // where host functions see it
  ASSERT_EQ(api_->launch_host_func(
                context_, stream,
                [](void* user_data) -> openreg_status {
                  auto* c = static_cast<Check*>(user_data);
                  c->saw_message = std::strcmp(c->device, "openreg") == 0;
                  return OPENREG_SUCCESS;
                },
                &check),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_TRUE(check.saw_message.load());
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(HostFunctionTest, MayCallTheDriver) {
  openreg_stream stream = NewStream(0);
  openreg_stream other = NewStream(1);
  struct Nested {
    const openreg_driver_api* api;
    openreg_context context;
    openreg_stream other;
    std::atomic<int> counter{0};
    openreg_status status = OPENREG_ERROR_INTERNAL;
  } nested{api_, context_, other};
  ASSERT_EQ(api_->launch_host_func(
                context_, stream,
                [](void* user_data) -> openreg_status {
                  auto* n = static_cast<Nested*>(user_data);
                  void* ptr = nullptr;
                  n->status = n->api->device_malloc(n->context, 0, 64, &ptr);
                  if (n->status == OPENREG_SUCCESS) {
                    n->status = n->api->device_free(n->context, 0, ptr);
                  }
                  // Enqueue on another stream, and wait for it.
                  if (n->status == OPENREG_SUCCESS) {
                    n->status = n->api->launch_host_func(n->context, n->other,
                                                         Count, &n->counter);
                  }
                  if (n->status == OPENREG_SUCCESS) {
                    n->status =
                        n->api->stream_synchronize(n->context, n->other);
                  }
                  return n->status;
                },
                &nested),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  EXPECT_EQ(nested.status, OPENREG_SUCCESS);
  EXPECT_EQ(nested.counter.load(), 1);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, other), OPENREG_SUCCESS);
}

TEST_P(HostFunctionTest, FailureIsReportedOnceBySynchronize) {
  openreg_stream stream = NewStream(0);
  openreg_stream bystander = NewStream(0);
  const openreg_status launched =
      api_->launch_host_func(context_, stream, ReturnInvalidDevice, nullptr);
  if (launched == OPENREG_SUCCESS) {
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_LAUNCH_FAILURE,
                          api_->stream_synchronize(context_, stream)));
  } else {
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_LAUNCH_FAILURE, launched));
  }
  // Reported once; the stream is usable again; other streams never saw it.
  EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_query(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(context_, bystander), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_synchronize(context_, 0), OPENREG_SUCCESS);
  std::atomic<int> counter{0};
  EXPECT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
            OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(counter.load(), 1);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, bystander), OPENREG_SUCCESS);
}

TEST_P(HostFunctionTest, FailureIsReportedOnceByQuery) {
  openreg_stream stream = NewStream(1);
  const openreg_status launched =
      api_->launch_host_func(context_, stream, ReturnInvalidDevice, nullptr);
  if (launched == OPENREG_SUCCESS) {
    openreg_status status;
    while ((status = api_->stream_query(context_, stream)) ==
           OPENREG_ERROR_NOT_READY) {
      std::this_thread::yield();
    }
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_LAUNCH_FAILURE, status));
  } else {
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_LAUNCH_FAILURE, launched));
  }
  EXPECT_EQ(api_->stream_query(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(HostFunctionTest, FailureIsReportedOnceByDeviceSynchronize) {
  openreg_stream stream = NewStream(2);
  const openreg_status launched =
      api_->launch_host_func(context_, stream, ReturnInvalidDevice, nullptr);
  if (launched == OPENREG_SUCCESS) {
    // Not by another device.
    EXPECT_EQ(api_->device_synchronize(context_, 1), OPENREG_SUCCESS);
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_LAUNCH_FAILURE,
                          api_->device_synchronize(context_, 2)));
  } else {
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_LAUNCH_FAILURE, launched));
  }
  EXPECT_EQ(api_->device_synchronize(context_, 2), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

}  // namespace
}  // namespace openreg::conformance
