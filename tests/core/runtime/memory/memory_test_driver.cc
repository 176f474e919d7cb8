#include "tests/core/runtime/memory/memory_test_driver.h"

#include <dlfcn.h>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace openreg::testing {

std::string DriverName(const ::testing::TestParamInfo<std::string>& info) {
  return info.param == kCpuSimPath ? "cpu_sim" : "threaded_sim";
}

std::unique_ptr<Driver> LoadTestDriver(const std::string& path,
                                       uint64_t device_memory,
                                       int32_t device_count,
                                       const std::string& options) {
  // Keep the library mapped after the Driver unloads it, as the core does
  // for the life of the process: threaded_sim leaves process-wide state and
  // exit handlers behind, which must not point into unmapped code.
  EXPECT_NE(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr) << dlerror();
  DriverConfig config;
  config.device_count = device_count;
  config.device_memory_bytes = device_memory;
  config.options = options;
  absl::StatusOr<std::unique_ptr<Driver>> driver = Driver::Load(path, config);
  EXPECT_TRUE(driver.ok()) << driver.status();
  return driver.ok() ? *std::move(driver) : nullptr;
}

StreamBlocker::StreamBlocker(const Driver& driver, openreg_stream stream)
    : driver_(driver), stream_(stream) {
  absl::Status launched = driver.LaunchHostFunc(stream, &Run, this);
  EXPECT_TRUE(launched.ok()) << launched;
  if (!launched.ok()) done_.Notify();
}

StreamBlocker::~StreamBlocker() {
  Release();
  EXPECT_TRUE(done_.WaitForNotificationWithTimeout(absl::Seconds(20)));
  // done_ is notified just before Run returns; the stream is past it only
  // once it has returned.
  driver_.StreamSynchronize(stream_).IgnoreError();
}

openreg_status StreamBlocker::Run(void* self) {
  auto* blocker = static_cast<StreamBlocker*>(self);
  const bool released =
      blocker->release_.WaitForNotificationWithTimeout(absl::Seconds(20));
  blocker->done_.Notify();
  return released ? OPENREG_SUCCESS : OPENREG_ERROR_INTERNAL;
}

}  // namespace openreg::testing
