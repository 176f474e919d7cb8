// Which driver library the conformance suite runs against, and loading it.
//
// The suite is one binary per run; conformance_main.cc reads the drivers
// from the command line (--openreg_driver=PATH, optionally followed by
// --openreg_driver_options=OPTIONS for that driver) before GoogleTest
// instantiates the suites, so every test runs once per driver given.
//
// Libraries are loaded once, through the core's DriverLibrary (as the core
// loads them), and never unloaded, so thread_local state in a driver outlives
// every test thread. DriverLibrary presents the 2.0 table whatever major the
// driver implements (a 1.x driver's table is adapted by the loader), so the
// whole suite runs on drivers of both majors.
#ifndef OPENREG_TESTS_CONFORMANCE_DRIVER_UNDER_TEST_H_
#define OPENREG_TESTS_CONFORMANCE_DRIVER_UNDER_TEST_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/driver/driver_library.h"
#include "driver_abi/openreg_driver.h"
#include "gtest/gtest.h"
#include "tests/conformance/expectations.h"

namespace openreg::conformance {

struct DriverUnderTest {
  std::string path;     // of the .so, absolute or relative to the cwd
  std::string options;  // passed in every context's config; may be empty
  std::vector<Expectation> expectations;  // see expectations.h
};

// gtest prints parameters with this when a test fails.
void PrintTo(const DriverUnderTest& driver, std::ostream* os);

// Called by main before InitGoogleTest: adds a driver, and sets the options
// or reads the expectations file of the driver added last (false, with
// `error` set, when there is none or the file is malformed).
void AddDriverUnderTest(std::string path);
bool SetOptionsOfLastDriver(std::string options);
bool ReadExpectationsOfLastDriver(const std::string& path, std::string& error);
const std::vector<DriverUnderTest>& DriversUnderTest();

// "cpu_sim", or "threaded_sim_adversarial_1_execution_slots_1": the library
// name and options, as a valid test name suffix.
std::string DriverTestName(
    const ::testing::TestParamInfo<DriverUnderTest>& info);

struct LoadedDriver {
  // Null when loading failed.
  std::shared_ptr<const DriverLibrary> library;
  // The symbol the library exports, for tests of the entry point itself. Its
  // table is of the driver's own major: a 1.x driver stores an
  // openreg_driver_api_v1 (openreg_driver_v1.h), so read the table's
  // openreg_driver_api_prefix before anything else.
  openreg_driver_get_api_fn entry = nullptr;
  std::string error;  // why loading failed, when library is null
};

// The library at `path`, loaded on first use.
const LoadedDriver& LoadDriver(const std::string& path);

}  // namespace openreg::conformance

#endif  // OPENREG_TESTS_CONFORMANCE_DRIVER_UNDER_TEST_H_
