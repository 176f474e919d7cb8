#include "tests/conformance/driver_fixture.h"

#include <cstring>

namespace openreg::conformance {

std::string CurrentTestName() {
  const ::testing::TestInfo* info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  // "Drivers/StreamTest" and "QueryIsExact/cpu_sim" (see
  // OPENREG_CONFORMANCE_SUITE).
  std::string suite = info->test_suite_name();
  suite = suite.substr(suite.find('/') + 1);
  std::string name = info->name();
  name = name.substr(0, name.find('/'));
  return suite + "." + name;
}

void UninitializedDriverTest::SetUp() {
  if (const Expectation* expectation =
          FindExpectation(GetParam().expectations, CurrentTestName())) {
    if (expectation->kind == Expectation::Kind::kUnsupported) {
      GTEST_SKIP() << "unsupported by this driver (" << expectation->where
                   << "): " << expectation->reason;
    }
    expected_failure_ = expectation;
    catcher_ = std::make_unique<::testing::ScopedFakeTestPartResultReporter>(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS,
        &caught_);
  }
  LoadTheDriver();
  StopIfSetUpFailedAsExpected();
}

void UninitializedDriverTest::LoadTheDriver() {
  const LoadedDriver& driver = LoadDriver(GetParam().path);
  ASSERT_NE(driver.api, nullptr) << driver.error;
  api_ = driver.api;
  entry_ = driver.entry;
}

void UninitializedDriverTest::TearDown() {
  if (expected_failure_ != nullptr) JudgeExpectedFailure();
}

bool UninitializedDriverTest::StopIfSetUpFailedAsExpected() {
  if (expected_failure_ == nullptr) return false;
  for (int i = 0; i < caught_.size(); ++i) {
    if (caught_.GetTestPartResult(i).fatally_failed()) {
      JudgeExpectedFailure();
      return true;
    }
  }
  return false;
}

void UninitializedDriverTest::JudgeExpectedFailure() {
  catcher_.reset();  // later results reach GoogleTest again
  const Expectation& expectation = *expected_failure_;
  expected_failure_ = nullptr;
  const ::testing::TestPartResult* first_failure = nullptr;
  const ::testing::TestPartResult* skip = nullptr;
  for (int i = 0; i < caught_.size(); ++i) {
    const ::testing::TestPartResult& result = caught_.GetTestPartResult(i);
    if (result.failed() && first_failure == nullptr) first_failure = &result;
    if (result.skipped() && skip == nullptr) skip = &result;
  }
  if (first_failure != nullptr) {
    // Reported as skipped: it neither passed nor fails the run.
    GTEST_SKIP() << "expected failure (" << expectation.where << ": "
                 << expectation.reason << "); it failed with: "
                 << first_failure->file_name() << ":"
                 << first_failure->line_number() << ": "
                 << first_failure->message();
  } else if (skip != nullptr) {
    GTEST_SKIP() << skip->message();
  } else {
    ADD_FAILURE() << "listed as an expected failure at " << expectation.where
                  << " (\"" << expectation.reason
                  << "\"), but it passed: the driver now conforms here, so "
                     "remove the entry";
  }
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
  if (HasFatalFailure() || IsSkipped()) return;
  InitTheDriver();
  StopIfSetUpFailedAsExpected();
}

void InitializedDriverTest::InitTheDriver() {
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
  UninitializedDriverTest::TearDown();
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
