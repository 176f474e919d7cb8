#include "tests/conformance/driver_fixture.h"

#include <cstring>

namespace openreg::conformance {

void UninitializedDriverTest::SetUp() {
  const LoadedDriver& driver = LoadDriver(GetParam().path);
  ASSERT_NE(driver.api, nullptr) << driver.error;
  api_ = driver.api;
  entry_ = driver.entry;
}

openreg_driver_config UninitializedDriverTest::Config(
    int32_t device_count, uint64_t memory_bytes,
    const std::string& extra_options) {
  options_ = GetParam().options;
  if (!extra_options.empty()) {
    if (!options_.empty()) options_ += ",";
    options_ += extra_options;
  }
  openreg_driver_config config;
  config.struct_size = OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0;
  config.device_count = device_count;
  config.device_memory_bytes = memory_bytes;
  config.options = options_.c_str();
  return config;
}

::testing::AssertionResult UninitializedDriverTest::FailsWith(
    openreg_status expected, openreg_status actual) const {
  const char* message = api_->last_error_message();
  if (actual != expected) {
    return ::testing::AssertionFailure()
           << "expected status " << expected << ", got " << actual
           << " (last error: \"" << (message ? message : "(null)") << "\")";
  }
  if (message == nullptr || message[0] == '\0') {
    return ::testing::AssertionFailure()
           << "status " << actual << " came without a last_error_message()";
  }
  return ::testing::AssertionSuccess() << message;
}

void InitializedDriverTest::SetUp() {
  UninitializedDriverTest::SetUp();
  if (HasFatalFailure()) return;
  const openreg_driver_config config = Config(kDeviceCount, kCapacity);
  ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS)
      << api_->last_error_message();
  initialized_ = true;
}

void InitializedDriverTest::TearDown() {
  if (initialized_) {
    EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS)
        << api_->last_error_message();
  }
}

openreg_stream InitializedDriverTest::NewStream(int32_t device,
                                                int32_t priority) {
  openreg_stream stream = nullptr;
  EXPECT_EQ(api_->stream_create(device, priority, &stream), OPENREG_SUCCESS)
      << api_->last_error_message();
  return stream;
}

openreg_event InitializedDriverTest::NewEvent(int32_t device,
                                              uint32_t flags) {
  openreg_event event = nullptr;
  EXPECT_EQ(api_->event_create(device, flags, &event), OPENREG_SUCCESS)
      << api_->last_error_message();
  return event;
}

void* InitializedDriverTest::DeviceAlloc(int32_t device, size_t size) {
  void* ptr = nullptr;
  EXPECT_EQ(api_->device_malloc(device, size, &ptr), OPENREG_SUCCESS)
      << api_->last_error_message();
  return ptr;
}

void* InitializedDriverTest::PinnedAlloc(size_t size) {
  void* ptr = nullptr;
  EXPECT_EQ(api_->host_malloc(size, &ptr), OPENREG_SUCCESS)
      << api_->last_error_message();
  return ptr;
}

uint64_t InitializedDriverTest::FreeBytes(int32_t device) {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_EQ(api_->mem_get_info(device, &free_bytes, &total_bytes),
            OPENREG_SUCCESS)
      << api_->last_error_message();
  EXPECT_EQ(total_bytes, kCapacity);
  return free_bytes;
}

openreg_device_properties InitializedDriverTest::Properties(int32_t device) {
  openreg_device_properties props;
  std::memset(&props, 0, sizeof(props));
  props.struct_size = OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0;
  EXPECT_EQ(api_->get_device_properties(device, &props), OPENREG_SUCCESS)
      << api_->last_error_message();
  return props;
}

openreg_pointer_attributes InitializedDriverTest::Attributes(const void* ptr) {
  openreg_pointer_attributes attributes;
  std::memset(&attributes, 0x5a, sizeof(attributes));
  attributes.struct_size = OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0;
  EXPECT_EQ(api_->pointer_get_attributes(ptr, &attributes), OPENREG_SUCCESS)
      << api_->last_error_message();
  return attributes;
}

std::vector<unsigned char> Pattern(size_t size, unsigned char seed) {
  std::vector<unsigned char> bytes(size);
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<unsigned char>(seed + i * 7);
  }
  return bytes;
}

}  // namespace openreg::conformance
