// The 1.x adapter, on the minimal driver as written for ABI 1.0: one context
// at a time, its own messages per thread, the driver's statuses passed on.
#include "core/driver/v1_adapter.h"

#include <memory>
#include <string>
#include <thread>

#include "core/driver/driver_library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/driver/test_paths.h"

namespace openreg {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class V1AdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto library = DriverLibrary::Load(kMinimalV1Path);
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = *std::move(library);
  }
  const openreg_driver_api& api() const { return library_->api(); }

  std::shared_ptr<const DriverLibrary> library_;
};

TEST_F(V1AdapterTest, OneContextAtATimeEvenAcrossLoads) {
  openreg_context first = nullptr;
  ASSERT_EQ(library_->CreateContext(nullptr, &first), OPENREG_SUCCESS);
  openreg_context second = nullptr;
  EXPECT_EQ(library_->CreateContext(nullptr, &second),
            OPENREG_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(second, nullptr);
  EXPECT_THAT(std::string(api().last_error_message(nullptr)),
              AllOf(HasSubstr("'minimal_v1' implements driver ABI 1.0"),
                    HasSubstr("one process-wide instance")));
  // The same library loaded again is the same instance.
  auto again = DriverLibrary::Load(kMinimalV1Path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->CreateContext(nullptr, &second),
            OPENREG_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(api().context_destroy(first), OPENREG_SUCCESS);
  ASSERT_EQ((*again)->CreateContext(nullptr, &second), OPENREG_SUCCESS);
  EXPECT_EQ((*again)->api().context_destroy(second), OPENREG_SUCCESS);
}

TEST_F(V1AdapterTest, TableCannotCreateAContextItself) {
  openreg_context context = nullptr;
  EXPECT_EQ(api().context_create(nullptr, &context),
            OPENREG_ERROR_NOT_SUPPORTED);
  EXPECT_THAT(std::string(api().last_error_message(nullptr)),
              HasSubstr("DriverLibrary::CreateContext"));
}

TEST_F(V1AdapterTest, StreamGetPriorityNeeds1_1) {
  openreg_context context = nullptr;
  ASSERT_EQ(library_->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  openreg_stream stream = nullptr;
  ASSERT_EQ(api().stream_create(context, 0, 0, &stream), OPENREG_SUCCESS);
  int32_t priority = 0;
  EXPECT_EQ(api().stream_get_priority(context, stream, &priority),
            OPENREG_ERROR_NOT_SUPPORTED);
  EXPECT_THAT(std::string(api().last_error_message(context)),
              AllOf(HasSubstr("'minimal_v1' implements driver ABI 1.0"),
                    HasSubstr("stream_get_priority needs ABI 1.1")));
  // Messages are per thread: another thread has its own.
  std::thread([&] {
    EXPECT_STREQ(api().last_error_message(nullptr), "");
  }).join();
  // A later failure of the driver itself replaces the adapter's message.
  EXPECT_EQ(api().stream_destroy(context, nullptr),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api().last_error_message(context)),
              HasSubstr("minimal_driver_v1: stream_destroy"));
  EXPECT_EQ(api().stream_destroy(context, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api().context_destroy(context), OPENREG_SUCCESS);
}

TEST_F(V1AdapterTest, NullContextAndDestroyedContext) {
  int32_t count = 0;
  EXPECT_EQ(api().get_device_count(nullptr, &count),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api().last_error_message(nullptr)),
              HasSubstr("the context is NULL"));
  openreg_context context = nullptr;
  ASSERT_EQ(library_->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  ASSERT_EQ(api().context_destroy(context), OPENREG_SUCCESS);
  // The 1.x driver's own verdict passes through.
  EXPECT_EQ(api().get_device_count(context, &count),
            OPENREG_ERROR_NOT_INITIALIZED);
}

TEST_F(V1AdapterTest, FailedInitKeepsTheDriversMessage) {
  openreg_driver_config config{};
  config.struct_size = OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0;
  config.options = "bogus=1";
  openreg_context context = nullptr;
  EXPECT_EQ(library_->CreateContext(&config, &context),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api().last_error_message(nullptr)),
              HasSubstr("unknown option in 'bogus=1'"));
  // The failed init left no context behind.
  ASSERT_EQ(library_->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  EXPECT_EQ(api().context_destroy(context), OPENREG_SUCCESS);
}

}  // namespace
}  // namespace openreg
