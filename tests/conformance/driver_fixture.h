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
// Drivers are loaded through the core's DriverLibrary, which presents the 2.0
// table for drivers of every major (driver_under_test.h), and tests call
// `api_->fn(context, ...)`. LoadedDriverTest leaves contexts to the test:
// NewContext creates one (as the core does, through the library) and the
// fixture destroys in TearDown every context the test did not destroy
// itself. InitializedDriverTest also creates `context_`, with kDeviceCount
// devices of kCapacity bytes (and the run's options), before the test.
//
// A loaded 1.x driver has one process-wide instance behind the loader's
// adapter, so it gives one context at a time; tests that need two at once
// are listed as unsupported in that driver's expectations.
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

#include "core/driver/driver_library.h"
#include "driver_abi/openreg_driver.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "tests/conformance/driver_under_test.h"

namespace openreg::conformance {

inline constexpr int32_t kDeviceCount = 3;
inline constexpr uint64_t kCapacity = uint64_t{1} << 20;

class LoadedDriverTest : public ::testing::TestWithParam<DriverUnderTest> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A v1.0 config. Its options are the run's options followed by `extra`;
  // the string lives until the next call.
  openreg_driver_config Config(int32_t device_count, uint64_t memory_bytes,
                               const std::string& extra_options = "");

  // DriverLibrary::CreateContext: how the core creates a context, for
  // drivers of any major. A context it returns is the test's to destroy.
  openreg_status CreateContext(const openreg_driver_config* config,
                               openreg_context* context) const;
  // A context the fixture destroys after the test unless the test destroys
  // it first with DestroyContext. Null (and a failure) if creation failed.
  openreg_context NewContext(const openreg_driver_config* config);
  // context_destroy of a context from NewContext; the status, for checks.
  openreg_status DestroyContext(openreg_context context);

  // One live handle of each kind, for tests of which context accepts them.
  struct Handles {
    openreg_stream stream = nullptr;
    openreg_event event = nullptr;  // timing, recorded on `stream`
    void* device_ptr = nullptr;     // 64 bytes on device 0
    void* host_ptr = nullptr;       // 64 pinned bytes
  };
  // NewContext with one device of kCapacity bytes, and `handles` made in it.
  openreg_context NewContextWithHandles(Handles& handles);

  // `actual` is `expected`, and the driver set a message for the failure:
  // last_error_message(context), where `context` is the one the failed call
  // used, or null after a failed context_create or a call with a null or
  // destroyed context. The two-argument form uses `context_`.
  ::testing::AssertionResult FailsWith(openreg_context context,
                                       openreg_status expected,
                                       openreg_status actual) const;
  ::testing::AssertionResult FailsWith(openreg_status expected,
                                       openreg_status actual) const {
    return FailsWith(context_, expected, actual);
  }

  const DriverLibrary& library() const { return *library_; }

  const openreg_driver_api* api_ = nullptr;
  // The driver's exported entry point (see LoadedDriver::entry).
  openreg_driver_get_api_fn entry_ = nullptr;
  // Created by InitializedDriverTest; null in a LoadedDriverTest.
  openreg_context context_ = nullptr;

  // For a test listed as an expected failure whose SetUp failed fatally
  // (the failure was caught, so GoogleTest does not know): reports it and
  // skips the body. True when it did.
  bool StopIfSetUpFailedAsExpected();

 private:
  void LoadTheDriver();
  // Reports the outcome of a test listed as an expected failure, once.
  void JudgeExpectedFailure();

  std::shared_ptr<const DriverLibrary> library_;
  std::string options_;
  // From NewContext, not yet destroyed.
  std::vector<openreg_context> live_contexts_;
  const Expectation* expected_failure_ = nullptr;
  ::testing::TestPartResultArray caught_;
  std::unique_ptr<::testing::ScopedFakeTestPartResultReporter> catcher_;
};

class InitializedDriverTest : public LoadedDriverTest {
 protected:
  void SetUp() override;

  // Made through context_; failures are reported, not fatal.
  openreg_stream NewStream(int32_t device, int32_t priority = 0);
  openreg_event NewEvent(int32_t device, uint32_t flags);
  void* DeviceAlloc(int32_t device, size_t size);
  void* PinnedAlloc(size_t size);
  uint64_t FreeBytes(int32_t device);
  openreg_device_properties Properties(int32_t device);
  openreg_pointer_attributes Attributes(const void* ptr);
  // Whether the driver implements the optional device_execution_offset
  // (2.1), and the offset it reports for `device` (0 without it: device
  // memory is then host-accessible at its address).
  bool HasExecutionOffset() const;
  intptr_t ExecutionOffset(int32_t device);
  // Where test code running on the host reaches the bytes at `device_ptr`, a
  // pointer into an allocation of `device`: `device_ptr` + ExecutionOffset.
  template <typename T>
  T* ExecutionView(int32_t device, T* device_ptr) {
    return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(device_ptr) +
                                ExecutionOffset(device));
  }

 private:
  void CreateTheContext();
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
