#include "tests/conformance/driver_fixture.h"

#include <algorithm>
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

void LoadedDriverTest::SetUp() {
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

void LoadedDriverTest::LoadTheDriver() {
  const LoadedDriver& driver = LoadDriver(GetParam().path);
  ASSERT_NE(driver.library, nullptr) << driver.error;
  library_ = driver.library;
  api_ = &library_->api();
  entry_ = driver.entry;
}

void LoadedDriverTest::TearDown() {
  // Newest first, as a core would unwind them.
  while (!live_contexts_.empty()) {
    EXPECT_EQ(DestroyContext(live_contexts_.back()), OPENREG_SUCCESS)
        << api_->last_error_message(nullptr);
  }
  if (expected_failure_ != nullptr) JudgeExpectedFailure();
}

bool LoadedDriverTest::StopIfSetUpFailedAsExpected() {
  if (expected_failure_ == nullptr) return false;
  for (int i = 0; i < caught_.size(); ++i) {
    if (caught_.GetTestPartResult(i).fatally_failed()) {
      JudgeExpectedFailure();
      return true;
    }
  }
  return false;
}

void LoadedDriverTest::JudgeExpectedFailure() {
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
                 << expectation.reason
                 << "); it failed with: " << first_failure->file_name() << ":"
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

openreg_driver_config LoadedDriverTest::Config(
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

openreg_status LoadedDriverTest::CreateContext(
    const openreg_driver_config* config, openreg_context* context) const {
  return library_->CreateContext(config, context);
}

openreg_context LoadedDriverTest::NewContext(
    const openreg_driver_config* config) {
  openreg_context context = nullptr;
  const openreg_status status = CreateContext(config, &context);
  EXPECT_EQ(status, OPENREG_SUCCESS) << api_->last_error_message(nullptr);
  if (status != OPENREG_SUCCESS) return nullptr;
  EXPECT_NE(context, nullptr);
  if (context != nullptr) live_contexts_.push_back(context);
  return context;
}

openreg_status LoadedDriverTest::DestroyContext(openreg_context context) {
  // Forgotten even if destruction fails: the context is the driver's to
  // release either way, and a second attempt would pass a dead context.
  live_contexts_.erase(
      std::remove(live_contexts_.begin(), live_contexts_.end(), context),
      live_contexts_.end());
  if (context == context_) context_ = nullptr;
  return api_->context_destroy(context);
}

openreg_context LoadedDriverTest::NewContextWithHandles(Handles& handles) {
  const openreg_driver_config config = Config(1, kCapacity);
  openreg_context context = NewContext(&config);
  if (context == nullptr) return nullptr;
  EXPECT_EQ(api_->stream_create(context, 0, 0, &handles.stream),
            OPENREG_SUCCESS)
      << api_->last_error_message(context);
  EXPECT_EQ(api_->event_create(context, 0, OPENREG_EVENT_ENABLE_TIMING,
                               &handles.event),
            OPENREG_SUCCESS)
      << api_->last_error_message(context);
  EXPECT_EQ(api_->event_record(context, handles.event, handles.stream),
            OPENREG_SUCCESS)
      << api_->last_error_message(context);
  EXPECT_EQ(api_->device_malloc(context, 0, 64, &handles.device_ptr),
            OPENREG_SUCCESS)
      << api_->last_error_message(context);
  EXPECT_EQ(api_->host_malloc(context, 64, &handles.host_ptr), OPENREG_SUCCESS)
      << api_->last_error_message(context);
  return context;
}

::testing::AssertionResult LoadedDriverTest::FailsWith(
    openreg_context context, openreg_status expected,
    openreg_status actual) const {
  const char* message = api_->last_error_message(context);
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
  LoadedDriverTest::SetUp();
  if (HasFatalFailure() || IsSkipped()) return;
  CreateTheContext();
  StopIfSetUpFailedAsExpected();
}

void InitializedDriverTest::CreateTheContext() {
  const openreg_driver_config config = Config(kDeviceCount, kCapacity);
  context_ = NewContext(&config);
  // NewContext reported why; this makes it fatal, so the body does not run.
  ASSERT_NE(context_, nullptr) << "no context to test";
}

openreg_stream InitializedDriverTest::NewStream(int32_t device,
                                                int32_t priority) {
  openreg_stream stream = nullptr;
  EXPECT_EQ(api_->stream_create(context_, device, priority, &stream),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  return stream;
}

openreg_event InitializedDriverTest::NewEvent(int32_t device, uint32_t flags) {
  openreg_event event = nullptr;
  EXPECT_EQ(api_->event_create(context_, device, flags, &event),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  return event;
}

void* InitializedDriverTest::DeviceAlloc(int32_t device, size_t size) {
  void* ptr = nullptr;
  EXPECT_EQ(api_->device_malloc(context_, device, size, &ptr), OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  return ptr;
}

bool InitializedDriverTest::HasExecutionOffset() const {
  return api_->struct_size >= OPENREG_DRIVER_API_STRUCT_SIZE_V2_1 &&
         api_->device_execution_offset != nullptr;
}

intptr_t InitializedDriverTest::ExecutionOffset(int32_t device) {
  if (!HasExecutionOffset()) return 0;
  intptr_t offset = 0;
  EXPECT_EQ(api_->device_execution_offset(context_, device, &offset),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  return offset;
}

void* InitializedDriverTest::PinnedAlloc(size_t size) {
  void* ptr = nullptr;
  EXPECT_EQ(api_->host_malloc(context_, size, &ptr), OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  return ptr;
}

uint64_t InitializedDriverTest::FreeBytes(int32_t device) {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_EQ(api_->mem_get_info(context_, device, &free_bytes, &total_bytes),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  EXPECT_EQ(total_bytes, kCapacity);
  return free_bytes;
}

openreg_device_properties InitializedDriverTest::Properties(int32_t device) {
  openreg_device_properties props;
  std::memset(&props, 0, sizeof(props));
  props.struct_size = OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0;
  EXPECT_EQ(api_->get_device_properties(context_, device, &props),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  return props;
}

openreg_pointer_attributes InitializedDriverTest::Attributes(const void* ptr) {
  openreg_pointer_attributes attributes;
  std::memset(&attributes, 0x5a, sizeof(attributes));
  attributes.struct_size = OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0;
  EXPECT_EQ(api_->pointer_get_attributes(context_, ptr, &attributes),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
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
