// Device count, properties and argument checks common to every call.
#include <cstring>
#include <string>

#include "tests/conformance/driver_fixture.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(DeviceTest, InitializedDriverTest);

openreg_status Succeed(void*) { return OPENREG_SUCCESS; }

TEST_P(DeviceTest, CountAndPropertiesFollowTheConfig) {
  int32_t count = 0;
  ASSERT_EQ(api_->get_device_count(context_, &count), OPENREG_SUCCESS);
  EXPECT_EQ(count, kDeviceCount);
  for (int32_t device = 0; device < kDeviceCount; ++device) {
    openreg_device_properties props;
    std::memset(&props, 0x5a, sizeof(props));
    props.struct_size = OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0;
    ASSERT_EQ(api_->get_device_properties(context_, device, &props),
              OPENREG_SUCCESS)
        << api_->last_error_message(context_);
    const size_t name_length = strnlen(props.name, sizeof(props.name));
    EXPECT_GT(name_length, 0u);
    EXPECT_LT(name_length, sizeof(props.name)) << "name is not terminated";
    EXPECT_EQ(props.total_memory_bytes, kCapacity);
    EXPECT_LE(props.greatest_stream_priority, props.least_stream_priority);
    EXPECT_GE(props.concurrent_streams, 1);
  }
}

TEST_P(DeviceTest, PropertiesHonourStructSize) {
  const openreg_device_properties full = Properties(0);
  // An older, shorter writer: fields past total_memory_bytes stay untouched.
  openreg_device_properties props;
  std::memset(&props, 0x5a, sizeof(props));
  int32_t untouched;
  std::memset(&untouched, 0x5a, sizeof(untouched));
  props.struct_size =
      OPENREG_STRUCT_SIZE(openreg_device_properties, total_memory_bytes);
  ASSERT_EQ(api_->get_device_properties(context_, 0, &props), OPENREG_SUCCESS);
  EXPECT_STREQ(props.name, full.name);
  EXPECT_EQ(props.total_memory_bytes, kCapacity);
  EXPECT_EQ(props.least_stream_priority, untouched);
  EXPECT_EQ(props.greatest_stream_priority, untouched);
  EXPECT_EQ(props.concurrent_streams, untouched);

  // A newer, longer writer: bytes past the v1.0 fields stay untouched.
  struct {
    openreg_device_properties props;
    unsigned char extra[32];
  } longer;
  std::memset(&longer, 0x5a, sizeof(longer));
  longer.props.struct_size = sizeof(longer);
  ASSERT_EQ(api_->get_device_properties(context_, 0, &longer.props),
            OPENREG_SUCCESS);
  EXPECT_EQ(longer.props.concurrent_streams, full.concurrent_streams);
  for (unsigned char byte : longer.extra) EXPECT_EQ(byte, 0x5a);

  // Too short to hold even the name.
  openreg_device_properties tiny{};
  tiny.struct_size = offsetof(openreg_device_properties, name) + 4;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->get_device_properties(context_, 0, &tiny)));
}

TEST_P(DeviceTest, InvalidDeviceIndicesAreInvalidDevice) {
  openreg_device_properties props{};
  props.struct_size = sizeof(props);
  void* ptr = nullptr;
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  openreg_stream stream = nullptr;
  openreg_event event = nullptr;
  for (int32_t device : {-1, kDeviceCount, 1000}) {
    SCOPED_TRACE(device);
    EXPECT_TRUE(
        FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                  api_->get_device_properties(context_, device, &props)));
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->device_malloc(context_, device, 16, &ptr)));
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->device_free(context_, device, nullptr)));
    EXPECT_TRUE(FailsWith(
        OPENREG_ERROR_INVALID_DEVICE,
        api_->mem_get_info(context_, device, &free_bytes, &total_bytes)));
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->stream_create(context_, device, 0, &stream)));
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->event_create(context_, device, 0, &event)));
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->device_synchronize(context_, device)));
  }
  EXPECT_EQ(api_->device_synchronize(context_, kDeviceCount - 1),
            OPENREG_SUCCESS);
}

TEST_P(DeviceTest, NullOutPointersAreInvalidArguments) {
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->get_device_count(context_, nullptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->get_device_properties(context_, 0, nullptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_malloc(context_, 0, 16, nullptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->host_malloc(context_, 16, nullptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->pointer_get_attributes(context_, this, nullptr)));
  uint64_t bytes = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->mem_get_info(context_, 0, nullptr, &bytes)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->mem_get_info(context_, 0, &bytes, nullptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_create(context_, 0, 0, nullptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_create(context_, 0, 0, nullptr)));
  openreg_event event = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->event_elapsed_time(context_, event, event, nullptr)));
  openreg_stream stream = NewStream(0);
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->launch_host_func(context_, stream, nullptr, nullptr)));
  EXPECT_EQ(api_->launch_host_func(context_, stream, Succeed, nullptr),
            OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

}  // namespace
}  // namespace openreg::conformance
