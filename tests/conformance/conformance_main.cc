// main() of the conformance suite: reads the drivers to test from the command
// line, then runs every test once per driver. Usage:
//   openreg_conformance DRIVER.so [--openreg_driver_options=OPTIONS]
//       [--openreg_expectations=FILE] [more drivers] [gtest flags]
// A driver may also be given as --openreg_driver=DRIVER.so. Options and
// expectations apply to the driver named just before them.
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "tests/conformance/driver_under_test.h"
#include "tests/conformance/expectations.h"

namespace {

constexpr char kUsage[] =
    "usage: %s DRIVER.so [--openreg_driver_options=KEY=VALUE,...] "
    "[--openreg_expectations=FILE] [more drivers, each with its own options] "
    "[gtest flags]\n"
    "Runs the openreg driver conformance suite against each driver library "
    "(see docs/writing_a_driver.md).\n";

// The value of `arg` when it is `flag=VALUE`, else null.
const char* FlagValue(const char* arg, const char* flag) {
  const size_t length = std::strlen(flag);
  if (std::strncmp(arg, flag, length) != 0 || arg[length] != '=') {
    return nullptr;
  }
  return arg + length + 1;
}

// "Suite.Test" of every registered conformance test.
std::set<std::string> RegisteredTestNames() {
  std::set<std::string> names;
  const ::testing::UnitTest& unit_test = *::testing::UnitTest::GetInstance();
  for (int s = 0; s < unit_test.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *unit_test.GetTestSuite(s);
    std::string suite_name = suite.name();
    suite_name = suite_name.substr(suite_name.find('/') + 1);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      std::string test_name = suite.GetTestInfo(t)->name();
      names.insert(suite_name + "." + test_name.substr(0, test_name.find('/')));
    }
  }
  return names;
}

// Every expectation names a test that exists: a renamed or deleted test must
// not leave an entry behind that silently matches nothing.
bool ExpectationsMatchTests() {
  const std::set<std::string> names = RegisteredTestNames();
  bool ok = true;
  for (const auto& driver : openreg::conformance::DriversUnderTest()) {
    for (const auto& expectation : driver.expectations) {
      bool matched = false;
      for (const std::string& name : names) {
        matched = matched ||
                  openreg::conformance::MatchesPattern(expectation.pattern, name);
      }
      if (!matched) {
        std::fprintf(stderr,
                     "%s: '%s' matches no conformance test; expected "
                     "'Suite.Test' as listed by --gtest_list_tests (without "
                     "the driver suffix). Fix or remove the entry.\n",
                     expectation.where.c_str(), expectation.pattern.c_str());
        ok = false;
      }
    }
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    std::string error;
    if (const char* path = FlagValue(arg, "--openreg_driver")) {
      openreg::conformance::AddDriverUnderTest(path);
    } else if (arg[0] != '-') {
      openreg::conformance::AddDriverUnderTest(arg);
    } else if (const char* options =
                   FlagValue(arg, "--openreg_driver_options")) {
      if (!openreg::conformance::SetOptionsOfLastDriver(options)) {
        std::fprintf(stderr,
                     "--openreg_driver_options must follow the driver it "
                     "applies to\n");
        return 2;
      }
    } else if (const char* file = FlagValue(arg, "--openreg_expectations")) {
      if (!openreg::conformance::ReadExpectationsOfLastDriver(file, error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 2;
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (openreg::conformance::DriversUnderTest().empty()) {
    std::fprintf(stderr, kUsage, argv[0]);
    return 2;
  }
  ::testing::InitGoogleTest(&argc, argv);
  if (!ExpectationsMatchTests()) return 2;
  return RUN_ALL_TESTS();
}
