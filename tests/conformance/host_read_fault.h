// A death-test check that reading `address` from host code faults, as a
// device address must (docs/memory.md, "Device memory the host cannot
// touch"). Shared by the conformance suite and the simulated drivers' own
// tests.
#ifndef OPENREG_TESTS_CONFORMANCE_HOST_READ_FAULT_H_
#define OPENREG_TESTS_CONFORMANCE_HOST_READ_FAULT_H_

#include <cstdio>

#include "gtest/gtest.h"

namespace openreg::conformance {

inline void ExpectHostReadFaults(const void* address) {
  // The child reruns this test alone, so the driver's threads in this
  // process do not matter.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        const volatile unsigned char* byte =
            static_cast<const volatile unsigned char*>(address);
        std::fprintf(stderr, "read %d\n", *byte);
      },
      "");
}

}  // namespace openreg::conformance

#endif  // OPENREG_TESTS_CONFORMANCE_HOST_READ_FAULT_H_
