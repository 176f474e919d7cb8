// stream_get_priority, optional in ABI 1.1 and required in 2.0, through the
// C++ Driver wrapper: the shipped (2.0) drivers report the priority a stream
// was created with; a driver built for ABI 1.0 (the minimal example's 1.0
// form) and a 1.1 driver that leaves the entry NULL load and work, and the
// function is reported as not supported with the driver's name and ABI
// version. Each case runs with and without the validation layer, which must
// offer what the driver offers.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/driver/driver.h"
#include "driver_abi/openreg_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/driver/test_paths.h"

namespace openreg {
namespace {

using ::testing::HasSubstr;

void ExpectError(const absl::Status& status, absl::StatusCode code,
                 std::initializer_list<std::string> fragments) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& fragment : fragments) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(fragment));
  }
}

openreg_status Succeed(void*) { return OPENREG_SUCCESS; }

// The parameter: whether the validation layer is on.
class OptionalFunctionTest : public ::testing::TestWithParam<bool> {
 protected:
  std::unique_ptr<Driver> Load(const std::string& path) {
    DriverConfig config;
    config.device_count = 2;
    config.device_memory_bytes = uint64_t{1} << 20;
    config.validation = GetParam();
    absl::StatusOr<std::unique_ptr<Driver>> driver = Driver::Load(path, config);
    EXPECT_TRUE(driver.ok()) << driver.status();
    return driver.ok() ? *std::move(driver) : nullptr;
  }
};

INSTANTIATE_TEST_SUITE_P(WithAndWithoutValidation, OptionalFunctionTest,
                         ::testing::Bool());

TEST_P(OptionalFunctionTest, ShippedDriversReportTheCreationPriority) {
  for (const std::string name : {"cpu_sim", "threaded_sim"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Driver> driver = Load(ShippedDriverPath(name));
    ASSERT_NE(driver, nullptr);
    EXPECT_EQ(driver->abi_version_major(), 2u);
    absl::StatusOr<DeviceProperties> props = driver->GetDeviceProperties(1);
    ASSERT_TRUE(props.ok()) << props.status();
    ASSERT_LT(props->greatest_stream_priority, props->least_stream_priority);
    for (int32_t priority = props->greatest_stream_priority;
         priority <= props->least_stream_priority; ++priority) {
      openreg_stream raw = nullptr;
      {
        absl::StatusOr<DriverStream> stream =
            driver->CreateStream(1, priority);
        ASSERT_TRUE(stream.ok()) << stream.status();
        raw = stream->get();
        absl::StatusOr<int32_t> reported = driver->StreamGetPriority(raw);
        ASSERT_TRUE(reported.ok()) << reported.status();
        EXPECT_EQ(*reported, priority);
      }
      // A destroyed stream has no priority.
      ExpectError(driver->StreamGetPriority(raw).status(),
                  absl::StatusCode::kInvalidArgument, {"stream_get_priority"});
    }
  }
}

TEST_P(OptionalFunctionTest, DriverOfAbi1_0ReportsItUnsupportedAndWorks) {
  std::unique_ptr<Driver> driver = Load(kMinimalV1Path);
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->abi_version_major(), 1u);
  EXPECT_EQ(driver->abi_version_minor(), 0u);
  absl::StatusOr<DriverStream> stream = driver->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  ExpectError(driver->StreamGetPriority(stream->get()).status(),
              absl::StatusCode::kUnimplemented,
              {"openreg driver 'minimal_v1' implements driver ABI 1.0",
               "stream_get_priority needs ABI 1.1", "update the driver"});
  // Everything of 1.0 still works.
  EXPECT_TRUE(driver->LaunchHostFunc(stream->get(), Succeed, nullptr).ok());
  EXPECT_TRUE(driver->StreamSynchronize(stream->get()).ok());
}

TEST_P(OptionalFunctionTest, NullEntryIsReportedUnsupported) {
  std::unique_ptr<Driver> driver =
      Load(BrokenDriverPath("null_optional_function_v1"));
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->abi_version_minor(), 1u);
  absl::StatusOr<DriverStream> stream = driver->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  ExpectError(
      driver->StreamGetPriority(stream->get()).status(),
      absl::StatusCode::kUnimplemented,
      {"openreg driver 'null_optional_function_v1' (driver ABI 1.1)",
       "does not implement the optional function stream_get_priority"});
}

}  // namespace
}  // namespace openreg
