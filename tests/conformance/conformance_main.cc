// main() of the conformance suite: reads the drivers to test from the command
// line, then runs every test once per driver. Usage:
//   conformance_test --openreg_driver=PATH [--openreg_driver_options=OPTIONS]
//       [more drivers, each with its own options] [gtest flags]
#include <cstdio>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "tests/conformance/driver_under_test.h"

int main(int argc, char** argv) {
  constexpr char kDriverFlag[] = "--openreg_driver=";
  constexpr char kOptionsFlag[] = "--openreg_driver_options=";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (std::strncmp(arg, kDriverFlag, sizeof(kDriverFlag) - 1) == 0) {
      openreg::conformance::AddDriverUnderTest(arg + sizeof(kDriverFlag) - 1);
    } else if (std::strncmp(arg, kOptionsFlag, sizeof(kOptionsFlag) - 1) ==
               0) {
      // Applies to the driver named just before it.
      if (!openreg::conformance::SetOptionsOfLastDriver(
              arg + sizeof(kOptionsFlag) - 1)) {
        std::fprintf(stderr, "%s must follow the %s it applies to\n",
                     kOptionsFlag, kDriverFlag);
        return 2;
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (openreg::conformance::DriversUnderTest().empty()) {
    std::fprintf(stderr,
                 "usage: %s --openreg_driver=PATH "
                 "[--openreg_driver_options=OPTIONS] ... [gtest flags]\n",
                 argv[0]);
    return 2;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
