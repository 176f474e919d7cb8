// Tests the C++ Driver wrapper on the real cpu_sim driver, and the mapping of
// driver status codes to absl::Status in driver_status.h.
//
// cpu_sim keeps process-wide state, so each test that uses it loads (and
// initializes) the driver and the Driver's destructor shuts it down again.
#include "core/driver/driver.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/driver/driver_status.h"
#include "driver_abi/openreg_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace openreg {
namespace {

using ::testing::HasSubstr;

// Relative to the runfiles root, the working directory of a Bazel test.
constexpr char kCpuSimPath[] = "plugins/cpu_sim/libopenreg_cpu_sim.so";

constexpr int32_t kDeviceCount = 3;
constexpr uint64_t kDeviceMemory = uint64_t{1} << 20;  // 1 MiB

void ExpectError(const absl::Status& status, absl::StatusCode code,
                 std::initializer_list<std::string> fragments) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& fragment : fragments) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(fragment));
  }
}

DriverConfig TestConfig() {
  DriverConfig config;
  config.device_count = kDeviceCount;
  config.device_memory_bytes = kDeviceMemory;
  return config;
}

class DriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Driver>> driver =
        Driver::Load(kCpuSimPath, TestConfig());
    ASSERT_TRUE(driver.ok()) << driver.status();
    driver_ = *std::move(driver);
  }

  std::unique_ptr<Driver> driver_;
};

TEST_F(DriverTest, Identity) {
  EXPECT_EQ(driver_->name(), "cpu_sim");
  EXPECT_FALSE(driver_->version().empty());
  EXPECT_EQ(driver_->path(), kCpuSimPath);
  EXPECT_EQ(driver_->abi_version_major(),
            uint32_t{OPENREG_DRIVER_ABI_VERSION_MAJOR});
}

TEST_F(DriverTest, DeviceCountComesFromTheConfig) {
  absl::StatusOr<int32_t> count = driver_->DeviceCount();
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, kDeviceCount);
}

TEST_F(DriverTest, DevicePropertiesOfEveryDevice) {
  for (int32_t device = 0; device < kDeviceCount; ++device) {
    SCOPED_TRACE(device);
    absl::StatusOr<DeviceProperties> props =
        driver_->GetDeviceProperties(device);
    ASSERT_TRUE(props.ok()) << props.status();
    EXPECT_EQ(props->name, "openreg cpu_sim device");
    EXPECT_EQ(props->total_memory_bytes, kDeviceMemory);
    EXPECT_LE(props->greatest_stream_priority, props->least_stream_priority);
    EXPECT_GE(props->concurrent_streams, 1);
  }
}

TEST_F(DriverTest, DevicePropertiesOfMissingDeviceIsOutOfRange) {
  for (int32_t device : {-1, kDeviceCount}) {
    SCOPED_TRACE(device);
    ExpectError(driver_->GetDeviceProperties(device).status(),
                absl::StatusCode::kOutOfRange,
                {"openreg driver 'cpu_sim'", "get_device_properties",
                 "INVALID_DEVICE", absl::StrCat("device ", device)});
  }
}

TEST_F(DriverTest, DeviceMallocPastCapacityIsResourceExhausted) {
  ExpectError(driver_->DeviceMalloc(0, kDeviceMemory + 1).status(),
              absl::StatusCode::kResourceExhausted,
              {"openreg driver 'cpu_sim'", "device_malloc failed",
               "OUT_OF_MEMORY",
               // The driver's own message.
               "cpu_sim: device 0 out of memory"});
}

TEST_F(DriverTest, DeviceMemoryIsPerDeviceAndFreedMemoryIsReusable) {
  absl::StatusOr<void*> whole = driver_->DeviceMalloc(1, kDeviceMemory);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_NE(*whole, nullptr);

  absl::StatusOr<MemoryInfo> info = driver_->MemGetInfo(1);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->total_bytes, kDeviceMemory);
  EXPECT_EQ(info->free_bytes, 0u);

  // Device 1 is full; one more byte fails, device 2 is unaffected.
  ExpectError(driver_->DeviceMalloc(1, 1).status(),
              absl::StatusCode::kResourceExhausted,
              {"device_malloc", "device 1 out of memory"});
  absl::StatusOr<void*> other = driver_->DeviceMalloc(2, 4096);
  ASSERT_TRUE(other.ok()) << other.status();

  absl::StatusOr<PointerAttributes> attributes =
      driver_->GetPointerAttributes(*whole);
  ASSERT_TRUE(attributes.ok()) << attributes.status();
  EXPECT_EQ(attributes->memory_type, OPENREG_MEMORY_TYPE_DEVICE);
  EXPECT_EQ(attributes->device, 1);
  EXPECT_EQ(attributes->base, *whole);
  EXPECT_EQ(attributes->size, kDeviceMemory);

  EXPECT_TRUE(driver_->DeviceFree(1, *whole).ok());
  EXPECT_TRUE(driver_->DeviceFree(2, *other).ok());
  absl::StatusOr<void*> again = driver_->DeviceMalloc(1, kDeviceMemory);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(driver_->DeviceFree(1, *again).ok());
}

TEST_F(DriverTest, StreamAndEventQueriesReportCompletion) {
  absl::StatusOr<openreg_stream> stream = driver_->StreamCreate(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<openreg_event> event =
      driver_->EventCreate(0, OPENREG_EVENT_DEFAULT);
  ASSERT_TRUE(event.ok()) << event.status();

  // Unrecorded event: complete.
  absl::StatusOr<bool> event_done = driver_->EventQuery(*event);
  ASSERT_TRUE(event_done.ok()) << event_done.status();
  EXPECT_TRUE(*event_done);

  ASSERT_TRUE(driver_->EventRecord(*event, *stream).ok());
  absl::StatusOr<bool> stream_done = driver_->StreamQuery(*stream);
  ASSERT_TRUE(stream_done.ok()) << stream_done.status();
  EXPECT_TRUE(*stream_done);
  event_done = driver_->EventQuery(*event);
  ASSERT_TRUE(event_done.ok()) << event_done.status();
  EXPECT_TRUE(*event_done);

  EXPECT_TRUE(driver_->StreamWaitEvent(*stream, *event).ok());
  EXPECT_TRUE(driver_->EventSynchronize(*event).ok());
  EXPECT_TRUE(driver_->StreamSynchronize(*stream).ok());
  EXPECT_TRUE(driver_->DeviceSynchronize(0).ok());

  EXPECT_TRUE(driver_->EventDestroy(*event).ok());
  EXPECT_TRUE(driver_->StreamDestroy(*stream).ok());
}

TEST_F(DriverTest, ElapsedTimeOfNonTimingEventsIsAnError) {
  absl::StatusOr<openreg_stream> stream = driver_->StreamCreate(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<openreg_event> start =
      driver_->EventCreate(0, OPENREG_EVENT_DEFAULT);
  absl::StatusOr<openreg_event> end =
      driver_->EventCreate(0, OPENREG_EVENT_DEFAULT);
  ASSERT_TRUE(start.ok()) << start.status();
  ASSERT_TRUE(end.ok()) << end.status();
  ASSERT_TRUE(driver_->EventRecord(*start, *stream).ok());
  ASSERT_TRUE(driver_->EventRecord(*end, *stream).ok());

  ExpectError(driver_->EventElapsedMilliseconds(*start, *end).status(),
              absl::StatusCode::kInvalidArgument,
              {"openreg driver 'cpu_sim'", "event_elapsed_time failed",
               "INVALID_ARGUMENT"});

  EXPECT_TRUE(driver_->EventDestroy(*start).ok());
  EXPECT_TRUE(driver_->EventDestroy(*end).ok());
  EXPECT_TRUE(driver_->StreamDestroy(*stream).ok());
}

TEST_F(DriverTest, ElapsedTimeOfTimingEvents) {
  absl::StatusOr<openreg_stream> stream = driver_->StreamCreate(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<openreg_event> start =
      driver_->EventCreate(0, OPENREG_EVENT_ENABLE_TIMING);
  absl::StatusOr<openreg_event> end =
      driver_->EventCreate(0, OPENREG_EVENT_ENABLE_TIMING);
  ASSERT_TRUE(start.ok()) << start.status();
  ASSERT_TRUE(end.ok()) << end.status();
  ASSERT_TRUE(driver_->EventRecord(*start, *stream).ok());
  ASSERT_TRUE(driver_->EventRecord(*end, *stream).ok());

  absl::StatusOr<float> elapsed =
      driver_->EventElapsedMilliseconds(*start, *end);
  ASSERT_TRUE(elapsed.ok()) << elapsed.status();
  EXPECT_GE(*elapsed, 0.0f);

  EXPECT_TRUE(driver_->EventDestroy(*start).ok());
  EXPECT_TRUE(driver_->EventDestroy(*end).ok());
  EXPECT_TRUE(driver_->StreamDestroy(*stream).ok());
}

openreg_status CountCall(void* user_data) {
  ++*static_cast<int*>(user_data);
  return OPENREG_SUCCESS;
}

openreg_status FailWithInternal(void* user_data) {
  ++*static_cast<int*>(user_data);
  return OPENREG_ERROR_INTERNAL;
}

TEST_F(DriverTest, LaunchHostFuncRunsTheFunction) {
  absl::StatusOr<openreg_stream> stream = driver_->StreamCreate(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  int calls = 0;
  ASSERT_TRUE(driver_->LaunchHostFunc(*stream, CountCall, &calls).ok());
  ASSERT_TRUE(driver_->StreamSynchronize(*stream).ok());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(driver_->StreamDestroy(*stream).ok());
}

TEST_F(DriverTest, FailingHostFunctionIsAborted) {
  absl::StatusOr<openreg_stream> stream = driver_->StreamCreate(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  int calls = 0;
  // The ABI allows the failure to surface from the launch or (sticky) from
  // the next synchronize of the stream; either way it is kAborted.
  absl::Status status = driver_->LaunchHostFunc(*stream, FailWithInternal,
                                                &calls);
  if (status.ok()) status = driver_->StreamSynchronize(*stream);
  ExpectError(status, absl::StatusCode::kAborted,
              {"openreg driver 'cpu_sim'", "LAUNCH_FAILURE"});
  EXPECT_EQ(calls, 1);
  // The failure is reported once; the stream is usable again.
  EXPECT_TRUE(driver_->StreamSynchronize(*stream).ok());
  EXPECT_TRUE(driver_->StreamDestroy(*stream).ok());
}

TEST_F(DriverTest, HostMemoryRoundTrip) {
  absl::StatusOr<void*> host = driver_->HostMalloc(256);
  ASSERT_TRUE(host.ok()) << host.status();
  absl::StatusOr<PointerAttributes> attributes =
      driver_->GetPointerAttributes(*host);
  ASSERT_TRUE(attributes.ok()) << attributes.status();
  EXPECT_EQ(attributes->memory_type, OPENREG_MEMORY_TYPE_HOST);
  EXPECT_TRUE(driver_->HostFree(*host).ok());
}

TEST_F(DriverTest, CopyThroughTheDevice) {
  absl::StatusOr<openreg_stream> stream = driver_->StreamCreate(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<void*> device = driver_->DeviceMalloc(0, 64);
  ASSERT_TRUE(device.ok()) << device.status();
  std::vector<uint8_t> in(64, 7);
  std::vector<uint8_t> out(64, 0);
  ASSERT_TRUE(driver_->MemsetAsync(*device, 0, 64, *stream).ok());
  ASSERT_TRUE(driver_
                  ->MemcpyAsync(*device, in.data(), 32,
                                OPENREG_MEMCPY_HOST_TO_DEVICE, *stream)
                  .ok());
  ASSERT_TRUE(driver_
                  ->MemcpyAsync(out.data(), *device, 64,
                                OPENREG_MEMCPY_DEVICE_TO_HOST, *stream)
                  .ok());
  ASSERT_TRUE(driver_->StreamSynchronize(*stream).ok());
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out[i], i < 32 ? 7 : 0) << "byte " << i;
  }
  EXPECT_TRUE(driver_->DeviceFree(0, *device).ok());
  EXPECT_TRUE(driver_->StreamDestroy(*stream).ok());
}

// --- Loading failures ----------------------------------------------------------

TEST(DriverLoadTest, InvalidConfigFailsInInit) {
  DriverConfig config = TestConfig();
  config.device_count = -1;
  ExpectError(Driver::Load(kCpuSimPath, config).status(),
              absl::StatusCode::kInvalidArgument,
              {"openreg driver 'cpu_sim'", "init failed", "device_count -1"});

  config = TestConfig();
  config.options = "no_such_option=1";
  ExpectError(Driver::Load(kCpuSimPath, config).status(),
              absl::StatusCode::kInvalidArgument,
              {"init failed", "no_such_option"});

  // A failed init leaves nothing behind: the driver loads again.
  absl::StatusOr<std::unique_ptr<Driver>> driver =
      Driver::Load(kCpuSimPath, TestConfig());
  ASSERT_TRUE(driver.ok()) << driver.status();
}

TEST(DriverLoadTest, DefaultConfigUsesTheDriverDefaults) {
  absl::StatusOr<std::unique_ptr<Driver>> driver =
      Driver::Load(kCpuSimPath, DriverConfig{});
  ASSERT_TRUE(driver.ok()) << driver.status();
  absl::StatusOr<int32_t> count = (*driver)->DeviceCount();
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_GE(*count, 1);
}

TEST(DriverLoadTest, DriverCanBeLoadedAgainAfterDestruction) {
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    absl::StatusOr<std::unique_ptr<Driver>> driver =
        Driver::Load(kCpuSimPath, TestConfig());
    ASSERT_TRUE(driver.ok()) << driver.status();
    absl::StatusOr<int32_t> count = (*driver)->DeviceCount();
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(*count, kDeviceCount);
  }
}

TEST(DriverLoadTest, BrokenLibraryFailsToLoad) {
  ExpectError(
      Driver::Load("tests/core/driver/broken/libwrong_major.so", TestConfig())
          .status(),
      absl::StatusCode::kFailedPrecondition, {"major versions must match"});
  ExpectError(Driver::Load("tests/core/driver/broken/not_a_library.so",
                           TestConfig())
                  .status(),
              absl::StatusCode::kInvalidArgument, {"as a shared library"});
}

// --- driver_status -------------------------------------------------------------

struct StatusMapping {
  openreg_status status;
  const char* name;
  absl::StatusCode code;
};

constexpr StatusMapping kMappings[] = {
    {OPENREG_SUCCESS, "SUCCESS", absl::StatusCode::kOk},
    {OPENREG_ERROR_INVALID_ARGUMENT, "INVALID_ARGUMENT",
     absl::StatusCode::kInvalidArgument},
    {OPENREG_ERROR_INVALID_DEVICE, "INVALID_DEVICE",
     absl::StatusCode::kOutOfRange},
    {OPENREG_ERROR_OUT_OF_MEMORY, "OUT_OF_MEMORY",
     absl::StatusCode::kResourceExhausted},
    {OPENREG_ERROR_NOT_READY, "NOT_READY", absl::StatusCode::kUnavailable},
    {OPENREG_ERROR_NOT_SUPPORTED, "NOT_SUPPORTED",
     absl::StatusCode::kUnimplemented},
    {OPENREG_ERROR_LAUNCH_FAILURE, "LAUNCH_FAILURE",
     absl::StatusCode::kAborted},
    {OPENREG_ERROR_DEVICE_LOST, "DEVICE_LOST", absl::StatusCode::kDataLoss},
    {OPENREG_ERROR_INTERNAL, "INTERNAL", absl::StatusCode::kInternal},
    {OPENREG_ERROR_NOT_INITIALIZED, "NOT_INITIALIZED",
     absl::StatusCode::kFailedPrecondition},
};

TEST(DriverStatusTest, EveryCodeHasANameAndAnAbslCode) {
  for (const StatusMapping& mapping : kMappings) {
    SCOPED_TRACE(mapping.name);
    EXPECT_EQ(DriverStatusName(mapping.status), mapping.name);
    EXPECT_EQ(ToAbslStatusCode(mapping.status), mapping.code);
  }
}

TEST(DriverStatusTest, ErrorCodesMapToDistinctAbslCodes) {
  for (const StatusMapping& a : kMappings) {
    for (const StatusMapping& b : kMappings) {
      if (a.status != b.status) {
        EXPECT_NE(a.code, b.code) << a.name << " and " << b.name;
      }
    }
  }
}

TEST(DriverStatusTest, UnknownCodes) {
  EXPECT_EQ(DriverStatusName(42), "UNKNOWN(42)");
  EXPECT_EQ(DriverStatusName(-1), "UNKNOWN(-1)");
  EXPECT_EQ(DriverStatusName(OPENREG_ERROR_NOT_INITIALIZED + 1),
            absl::StrCat("UNKNOWN(", OPENREG_ERROR_NOT_INITIALIZED + 1, ")"));
  EXPECT_EQ(ToAbslStatusCode(42), absl::StatusCode::kInternal);
  EXPECT_EQ(ToAbslStatusCode(-1), absl::StatusCode::kInternal);
}

TEST(DriverStatusTest, DriverStatusToAbsl) {
  EXPECT_TRUE(DriverStatusToAbsl(OPENREG_SUCCESS, "drv", "fn", "ignored").ok());

  const absl::Status oom = DriverStatusToAbsl(
      OPENREG_ERROR_OUT_OF_MEMORY, "drv", "device_malloc", "no room left");
  EXPECT_EQ(oom.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(oom.message(),
            "openreg driver 'drv': device_malloc failed with OUT_OF_MEMORY: "
            "no room left");

  ExpectError(DriverStatusToAbsl(OPENREG_ERROR_LAUNCH_FAILURE, "drv",
                                 "launch_host_func", ""),
              absl::StatusCode::kAborted,
              {"launch_host_func failed with LAUNCH_FAILURE",
               "(the driver gave no message)"});
  ExpectError(DriverStatusToAbsl(99, "drv", "init", "what"),
              absl::StatusCode::kInternal, {"init failed with UNKNOWN(99)"});
}

}  // namespace
}  // namespace openreg
