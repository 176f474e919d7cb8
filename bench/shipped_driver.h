// Loads a shipped driver for a benchmark, from the runfiles of `bazel run`.
#ifndef OPENREG_BENCH_SHIPPED_DRIVER_H_
#define OPENREG_BENCH_SHIPPED_DRIVER_H_

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "core/driver/driver.h"

namespace openreg {

// The driver `name` (e.g. "cpu_sim") with one device and the driver
// `options`; exits the benchmark with the loader's message if it cannot be
// loaded.
inline std::unique_ptr<Driver> LoadShippedDriver(
    const std::string& name, const std::string& options = "") {
  const std::string path = "plugins/" + name + "/libopenreg_" + name + ".so";
  DriverConfig config;
  config.device_count = 1;
  config.options = options;
  absl::StatusOr<std::unique_ptr<Driver>> driver = Driver::Load(path, config);
  if (!driver.ok()) {
    std::fprintf(stderr, "cannot load %s: %s\n", path.c_str(),
                 std::string(driver.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(driver);
}

}  // namespace openreg

#endif  // OPENREG_BENCH_SHIPPED_DRIVER_H_
