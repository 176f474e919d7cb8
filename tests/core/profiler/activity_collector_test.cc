// ActivityCollector against the shipped drivers: the records of host
// functions run on two streams arrive (on threaded_sim from each stream's
// worker thread, which TSan checks), carry the correlation id set by the
// enqueuing thread, and land on the system clock; a driver without the 2.2
// group is refused with a message naming it; a record shorter than 2.2's is
// dropped.
#include "core/profiler/activity_collector.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/driver/driver.h"
#include "driver_abi/openreg_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/driver/test_paths.h"

namespace openreg::profiler {
namespace {

using ::testing::HasSubstr;

int64_t SystemNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

openreg_status Nothing(void*) { return OPENREG_SUCCESS; }

std::unique_ptr<Driver> LoadOrDie(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Driver>> driver = Driver::Load(path, {});
  EXPECT_TRUE(driver.ok()) << driver.status();
  return driver.ok() ? *std::move(driver) : nullptr;
}

class ActivityCollectorTest : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(ShippedDrivers, ActivityCollectorTest,
                         ::testing::Values("cpu_sim", "threaded_sim"));

TEST_P(ActivityCollectorTest, RecordsEveryItemOfTwoStreamsOnTheSystemClock) {
  std::unique_ptr<Driver> driver = LoadOrDie(ShippedDriverPath(GetParam()));
  ASSERT_NE(driver, nullptr);
  ASSERT_TRUE(driver->has_activity_recording());
  absl::StatusOr<DriverStream> first = driver->CreateStream(0, 0);
  absl::StatusOr<DriverStream> second = driver->CreateStream(0, 0);
  ASSERT_TRUE(first.ok() && second.ok());

  ActivityCollector collector(*driver);
  const int64_t before = SystemNowNs();
  ASSERT_TRUE(collector.Start().ok());
  constexpr int kItems = 50;
  for (int i = 0; i < kItems; ++i) {
    ASSERT_TRUE(driver->SetActivityCorrelationId(1000 + i).ok());
    ASSERT_TRUE(driver->LaunchHostFunc(first->get(), Nothing, nullptr).ok());
    ASSERT_TRUE(driver->LaunchHostFunc(second->get(), Nothing, nullptr).ok());
  }
  ASSERT_TRUE(driver->StreamSynchronize(first->get()).ok());
  ASSERT_TRUE(driver->StreamSynchronize(second->get()).ok());
  ASSERT_TRUE(collector.Stop().ok());
  const int64_t after = SystemNowNs();

  std::vector<DeviceActivity> activities = collector.Take();
  ASSERT_EQ(activities.size(), 2u * kItems);
  int on_first = 0;
  std::vector<int> per_id(kItems, 0);
  // The clock offset is sampled to within a few microseconds; a millisecond
  // of slack keeps the check about which clock, not about jitter.
  constexpr int64_t kSlackNs = 1'000'000;
  for (const DeviceActivity& activity : activities) {
    EXPECT_EQ(activity.kind, OPENREG_ACTIVITY_HOST_FUNCTION);
    EXPECT_LE(activity.start_ns, activity.end_ns);
    EXPECT_GE(activity.start_ns, before - kSlackNs);
    EXPECT_LE(activity.end_ns, after + kSlackNs);
    ASSERT_GE(activity.correlation_id, 1000u);
    ASSERT_LT(activity.correlation_id, 1000u + kItems);
    ++per_id[activity.correlation_id - 1000];
    if (activity.stream == first->get()) ++on_first;
  }
  EXPECT_EQ(on_first, kItems);
  for (int count : per_id) EXPECT_EQ(count, 2);
  // Taken once: the collector is empty afterwards.
  EXPECT_TRUE(collector.Take().empty());
}

TEST_P(ActivityCollectorTest, NothingIsRecordedAfterStop) {
  std::unique_ptr<Driver> driver = LoadOrDie(ShippedDriverPath(GetParam()));
  ASSERT_NE(driver, nullptr);
  absl::StatusOr<DriverStream> stream = driver->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok());
  ActivityCollector collector(*driver);
  ASSERT_TRUE(collector.Start().ok());
  ASSERT_TRUE(collector.Stop().ok());
  ASSERT_TRUE(driver->LaunchHostFunc(stream->get(), Nothing, nullptr).ok());
  ASSERT_TRUE(driver->StreamSynchronize(stream->get()).ok());
  EXPECT_TRUE(collector.Take().empty());
}

TEST(ActivityCollectorErrorsTest, ADriverWithoutTheGroupIsNamed) {
  std::unique_ptr<Driver> driver = LoadOrDie(kMinimalPath);
  ASSERT_NE(driver, nullptr);
  ASSERT_FALSE(driver->has_activity_recording());
  ActivityCollector collector(*driver);
  const absl::Status status = collector.Start();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("'minimal'"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("activity_enable"));
}

TEST(ActivityCollectorErrorsTest, ARecordShorterThanTwoPointTwoIsDropped) {
  std::unique_ptr<Driver> driver = LoadOrDie(ShippedDriverPath("cpu_sim"));
  ASSERT_NE(driver, nullptr);
  ActivityCollector collector(*driver);
  openreg_activity_record record{};
  record.struct_size = OPENREG_ACTIVITY_RECORD_STRUCT_SIZE_V2_2 - 1;
  ActivityCollector::Receive(&collector, &record);
  ActivityCollector::Receive(&collector, nullptr);
  EXPECT_TRUE(collector.Take().empty());
  record.struct_size = OPENREG_ACTIVITY_RECORD_STRUCT_SIZE_V2_2;
  ActivityCollector::Receive(&collector, &record);
  EXPECT_EQ(collector.Take().size(), 1u);
}

}  // namespace
}  // namespace openreg::profiler
