// The fixtures every conformance test derives from, parameterised over the
// drivers under test (see driver_under_test.h).
//
// Both apply the driver's expectations (expectations.h): an unsupported test
// is skipped in SetUp with its reason. The failures of an expected failure
// are caught from SetUp to TearDown (on every thread, through GoogleTest's
// failure-reporter interface) and the test is then reported as skipped, with
// the reason and the first failure; if nothing failed, the test fails,
// saying that the entry is stale. A test that crashes cannot be caught: list
// it as unsupported.
//
// A driver's state is process-wide: UninitializedDriverTest leaves init and
// shutdown to the test; InitializedDriverTest initializes the driver with
// kDeviceCount devices of kCapacity bytes (and the run's options) and shuts it
// down after the test.
//
// The tests hold for every correct driver, synchronous or asynchronous: they
// rely only on what openreg_driver.h promises, check statuses but not message
// wording (only that a failure has a message), and treat "work already
// finished when the call returned" as a valid outcome wherever the ABI allows
// it. Driver-specific promises are tested in tests/plugins/<driver>/.
#ifndef OPENREG_TESTS_CONFORMANCE_DRIVER_FIXTURE_H_
#define OPENREG_TESTS_CONFORMANCE_DRIVER_FIXTURE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "driver_abi/openreg_driver.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "tests/conformance/driver_under_test.h"

namespace openreg::conformance {

inline constexpr int32_t kDeviceCount = 3;
inline constexpr uint64_t kCapacity = uint64_t{1} << 20;

class UninitializedDriverTest
    : public ::testing::TestWithParam<DriverUnderTest> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A v1.0 config. Its options are the run's options followed by `extra`;
  // the string lives until the next call.
  openreg_driver_config Config(int32_t device_count, uint64_t memory_bytes,
                               const std::string& extra_options = "");

  // `actual` is `expected`, and the driver set a message for the failure.
  ::testing::AssertionResult FailsWith(openreg_status expected,
                                       openreg_status actual) const;

  const openreg_driver_api* api_ = nullptr;
  openreg_driver_get_api_fn entry_ = nullptr;

  // For a test listed as an expected failure whose SetUp failed fatally
  // (the failure was caught, so GoogleTest does not know): reports it and
  // skips the body. True when it did.
  bool StopIfSetUpFailedAsExpected();

 private:
  void LoadTheDriver();
  // Reports the outcome of a test listed as an expected failure, once.
  void JudgeExpectedFailure();

  std::string options_;
  const Expectation* expected_failure_ = nullptr;
  ::testing::TestPartResultArray caught_;
  std::unique_ptr<::testing::ScopedFakeTestPartResultReporter> catcher_;
};

class InitializedDriverTest : public UninitializedDriverTest {
 protected:
  void SetUp() override;
  void TearDown() override;

  openreg_stream NewStream(int32_t device, int32_t priority = 0);
  openreg_event NewEvent(int32_t device, uint32_t flags);
  void* DeviceAlloc(int32_t device, size_t size);
  void* PinnedAlloc(size_t size);
  uint64_t FreeBytes(int32_t device);
  openreg_device_properties Properties(int32_t device);
  openreg_pointer_attributes Attributes(const void* ptr);

 private:
  void InitTheDriver();

  bool initialized_ = false;
};

// "StreamTest.QueryIsExact" for the running test, as expectations name it.
std::string CurrentTestName();

// Bytes that differ from position to position, for copy checks.
std::vector<unsigned char> Pattern(size_t size, unsigned char seed);

}  // namespace openreg::conformance

// Declares a test suite `suite` deriving from `base` and runs it against
// every driver under test.
#define OPENREG_CONFORMANCE_SUITE(suite, base)                         \
  class suite : public ::openreg::conformance::base {};                \
  INSTANTIATE_TEST_SUITE_P(                                            \
      Drivers, suite,                                                  \
      ::testing::ValuesIn(::openreg::conformance::DriversUnderTest()), \
      ::openreg::conformance::DriverTestName)

#endif  // OPENREG_TESTS_CONFORMANCE_DRIVER_FIXTURE_H_
