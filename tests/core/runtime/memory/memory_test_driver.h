// Loads a shipped driver for the allocator tests, and a host function that
// holds a stream until the test releases it.
#ifndef OPENREG_TESTS_CORE_RUNTIME_MEMORY_MEMORY_TEST_DRIVER_H_
#define OPENREG_TESTS_CORE_RUNTIME_MEMORY_MEMORY_TEST_DRIVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "core/driver/driver.h"
#include "gtest/gtest.h"

namespace openreg::testing {

inline constexpr char kCpuSimPath[] = "plugins/cpu_sim/libopenreg_cpu_sim.so";
inline constexpr char kThreadedSimPath[] =
    "plugins/threaded_sim/libopenreg_threaded_sim.so";

// Parameters for INSTANTIATE_TEST_SUITE_P over both shipped drivers, and
// the test-name suffix for each ("cpu_sim", "threaded_sim").
inline auto ShippedDriverPaths() {
  return ::testing::Values(std::string(kCpuSimPath),
                           std::string(kThreadedSimPath));
}
std::string DriverName(const ::testing::TestParamInfo<std::string>& info);

// The driver at `path` (relative to the runfiles root) with `device_count`
// devices of `device_memory` bytes each and the driver-specific `options`;
// fails the test on error.
std::unique_ptr<Driver> LoadTestDriver(const std::string& path,
                                       uint64_t device_memory,
                                       int32_t device_count = 1,
                                       const std::string& options = "");

// Blocks the stream it is launched on until Release() (or a 20 s safety
// timeout, so a bug fails the test rather than hanging it). Only for
// asynchronous drivers: a synchronous one would run it on the launching
// thread.
class StreamBlocker {
 public:
  // Launches the blocking function on `stream`.
  StreamBlocker(const Driver& driver, openreg_stream stream);
  // Releases the stream and waits until the function has returned.
  ~StreamBlocker();

  // Lets the stream run on; only the test's thread calls it.
  void Release() {
    if (!release_.HasBeenNotified()) release_.Notify();
  }

 private:
  static openreg_status Run(void* self);

  const Driver& driver_;
  const openreg_stream stream_;
  absl::Notification release_;
  absl::Notification done_;
};

}  // namespace openreg::testing

#endif  // OPENREG_TESTS_CORE_RUNTIME_MEMORY_MEMORY_TEST_DRIVER_H_
