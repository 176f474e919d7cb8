// Paths of the drivers the tests load, relative to the runfiles root (the
// working directory of a Bazel test).
#ifndef OPENREG_TESTS_CORE_DRIVER_TEST_PATHS_H_
#define OPENREG_TESTS_CORE_DRIVER_TEST_PATHS_H_

#include <string>

namespace openreg {

inline constexpr char kMinimalPath[] =
    "examples/minimal_driver/libopenreg_minimal.so";
inline constexpr char kMinimalV1Path[] =
    "examples/minimal_driver/libopenreg_minimal_v1.so";

// "cpu_sim" or "threaded_sim".
inline std::string ShippedDriverPath(const std::string& name) {
  return "plugins/" + name + "/libopenreg_" + name + ".so";
}

inline std::string BrokenDriverPath(const std::string& name) {
  return "tests/core/driver/broken/lib" + name + ".so";
}

}  // namespace openreg

#endif  // OPENREG_TESTS_CORE_DRIVER_TEST_PATHS_H_
