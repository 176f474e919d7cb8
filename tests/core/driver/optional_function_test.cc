// The optional functions of ABI 1.1 through the C++ Driver wrapper: the
// shipped drivers implement stream_get_priority; a driver built for ABI 1.0
// (the minimal example driver, kept at 1.0 on purpose) and a 1.1 driver that
// leaves the entry NULL load and work, and the function is reported as not
// supported with the driver's name and ABI version. Each case runs with and
// without the validation layer, which must offer what the driver offers.
#include <dlfcn.h>

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

namespace openreg {
namespace {

using ::testing::HasSubstr;

// Relative to the runfiles root, the working directory of a Bazel test.
constexpr char kMinimalPath[] = "examples/minimal_driver/libopenreg_minimal.so";
constexpr char kNullOptionalPath[] =
    "tests/core/driver/broken/libnull_optional_function.so";

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
    // Kept mapped after the Driver unloads it, as the core does: threaded_sim
    // keeps process-wide state (see validation_layer_test.cc).
    EXPECT_NE(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr)
        << dlerror();
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
    std::unique_ptr<Driver> driver =
        Load("plugins/" + name + "/libopenreg_" + name + ".so");
    ASSERT_NE(driver, nullptr);
    EXPECT_EQ(driver->abi_version_minor(), 1u);
    absl::StatusOr<DeviceProperties> props = driver->GetDeviceProperties(1);
    ASSERT_TRUE(props.ok()) << props.status();
    ASSERT_LT(props->greatest_stream_priority, props->least_stream_priority);
    for (int32_t priority = props->greatest_stream_priority;
         priority <= props->least_stream_priority; ++priority) {
      absl::StatusOr<openreg_stream> stream =
          driver->StreamCreate(1, priority);
      ASSERT_TRUE(stream.ok()) << stream.status();
      absl::StatusOr<int32_t> reported = driver->StreamGetPriority(*stream);
      ASSERT_TRUE(reported.ok()) << reported.status();
      EXPECT_EQ(*reported, priority);
      ASSERT_TRUE(driver->StreamDestroy(*stream).ok());
      // A destroyed stream has no priority.
      ExpectError(driver->StreamGetPriority(*stream).status(),
                  absl::StatusCode::kInvalidArgument, {"stream_get_priority"});
    }
  }
}

TEST_P(OptionalFunctionTest, DriverOfAbi1_0ReportsItUnsupportedAndWorks) {
  std::unique_ptr<Driver> driver = Load(kMinimalPath);
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->abi_version_minor(), 0u);
  absl::StatusOr<openreg_stream> stream = driver->StreamCreate(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  ExpectError(driver->StreamGetPriority(*stream).status(),
              absl::StatusCode::kUnimplemented,
              {"openreg driver 'minimal' implements driver ABI 1.0",
               "stream_get_priority needs ABI 1.1", "update the driver"});
  // Everything of 1.0 still works.
  EXPECT_TRUE(driver->LaunchHostFunc(*stream, Succeed, nullptr).ok());
  EXPECT_TRUE(driver->StreamSynchronize(*stream).ok());
  EXPECT_TRUE(driver->StreamDestroy(*stream).ok());
}

TEST_P(OptionalFunctionTest, NullEntryIsReportedUnsupported) {
  std::unique_ptr<Driver> driver = Load(kNullOptionalPath);
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->abi_version_minor(), 1u);
  // The wrapper answers without calling the driver, so any handle will do.
  ExpectError(driver->StreamGetPriority(nullptr).status(),
              absl::StatusCode::kUnimplemented,
              {"openreg driver 'null_optional_function' (driver ABI 1.1)",
               "does not implement the optional function stream_get_priority"});
}

}  // namespace
}  // namespace openreg
