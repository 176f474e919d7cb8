// The C++ Driver wrapper: on the minimal driver, 2.0 and 1.0, contexts of one
// library coexist, owning handles destroy themselves, copies take a CopyKind;
// on cpu_sim, every call and its errors as the core sees them; contexts of
// both shipped drivers come and go; and driver status conversion.
#include "core/driver/driver.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/driver/driver_status.h"
#include "driver_abi/openreg_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/driver/test_paths.h"

namespace openreg {
namespace {

using ::testing::HasSubstr;

void ExpectError(const absl::Status& status, absl::StatusCode code,
                 std::initializer_list<std::string> fragments) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& fragment : fragments) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(fragment));
  }
}

std::unique_ptr<Driver> LoadOrDie(const std::string& path,
                                  DriverConfig config = {}) {
  absl::StatusOr<std::unique_ptr<Driver>> driver = Driver::Load(path, config);
  EXPECT_TRUE(driver.ok()) << driver.status();
  return driver.ok() ? *std::move(driver) : nullptr;
}

// The parameter: whether the validation layer is on.
class DriverTest : public ::testing::TestWithParam<bool> {
 protected:
  DriverConfig Config() const {
    DriverConfig config;
    config.device_count = 2;
    config.device_memory_bytes = uint64_t{1} << 20;
    config.validation = GetParam();
    return config;
  }
};

INSTANTIATE_TEST_SUITE_P(WithAndWithoutValidation, DriverTest,
                         ::testing::Bool());

TEST_P(DriverTest, TwoContextsOfOneLibraryCoexist) {
  std::unique_ptr<Driver> first = LoadOrDie(kMinimalPath, Config());
  ASSERT_NE(first, nullptr);
  DriverConfig config = Config();
  config.device_count = 3;
  absl::StatusOr<std::unique_ptr<Driver>> second =
      Driver::Create(first->library(), config);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*first->DeviceCount(), 2);
  EXPECT_EQ(*(*second)->DeviceCount(), 3);
  absl::StatusOr<void*> ptr = first->DeviceMalloc(0, 4096);
  ASSERT_TRUE(ptr.ok()) << ptr.status();
  // Memory belongs to the context that made it.
  EXPECT_EQ(first->GetPointerAttributes(*ptr)->memory_type,
            OPENREG_MEMORY_TYPE_DEVICE);
  EXPECT_EQ((*second)->GetPointerAttributes(*ptr)->memory_type,
            OPENREG_MEMORY_TYPE_UNREGISTERED);
  EXPECT_EQ((*second)->MemGetInfo(0)->free_bytes, uint64_t{1} << 20);
  second->reset();
  // The first context lives on after the second is gone.
  EXPECT_TRUE(first->DeviceFree(0, *ptr).ok());
}

TEST_P(DriverTest, OwningHandlesDestroyOnScopeExit) {
  std::unique_ptr<Driver> driver = LoadOrDie(kMinimalPath, Config());
  ASSERT_NE(driver, nullptr);
  openreg_stream raw_stream = nullptr;
  openreg_event raw_event = nullptr;
  {
    absl::StatusOr<DriverStream> stream = driver->CreateStream(1, 0);
    ASSERT_TRUE(stream.ok()) << stream.status();
    EXPECT_TRUE(*stream);
    EXPECT_EQ(stream->device(), 1);
    absl::StatusOr<DriverEvent> event = driver->CreateEvent(1);
    ASSERT_TRUE(event.ok()) << event.status();
    raw_stream = stream->get();
    raw_event = event->get();
    DriverStream moved = *std::move(stream);
    EXPECT_FALSE(*stream);
    EXPECT_EQ(moved.get(), raw_stream);
    EXPECT_TRUE(driver->EventRecord(raw_event, raw_stream).ok());
    EXPECT_TRUE(driver->StreamSynchronize(raw_stream).ok());
  }
  ExpectError(driver->StreamQuery(raw_stream).status(),
              absl::StatusCode::kInvalidArgument, {"stream_query"});
  ExpectError(driver->EventQuery(raw_event).status(),
              absl::StatusCode::kInvalidArgument, {"event_query"});
}

TEST_P(DriverTest, ReleasedEventsCanBeAdoptedAgain) {
  std::unique_ptr<Driver> driver = LoadOrDie(kMinimalPath, Config());
  ASSERT_NE(driver, nullptr);
  absl::StatusOr<DriverEvent> event =
      driver->CreateEvent(0, EventFlags::kEnableTiming);
  ASSERT_TRUE(event.ok()) << event.status();
  openreg_event raw = event->release();
  EXPECT_FALSE(*event);
  EXPECT_TRUE(driver->EventQuery(raw).ok());  // not destroyed by release
  {
    DriverEvent adopted = driver->AdoptEvent(raw, 0);
    EXPECT_EQ(adopted.get(), raw);
  }
  EXPECT_FALSE(driver->EventQuery(raw).ok());
}

TEST_P(DriverTest, CopiesTakeACopyKind) {
  for (const char* path : {kMinimalPath, kMinimalV1Path}) {
    SCOPED_TRACE(path);
    std::unique_ptr<Driver> driver = LoadOrDie(path, Config());
    ASSERT_NE(driver, nullptr);
    absl::StatusOr<DriverStream> stream = driver->CreateStream(0, 0);
    ASSERT_TRUE(stream.ok()) << stream.status();
    void* device = *driver->DeviceMalloc(0, 16);
    const char in[16] = "openreg";
    char out[16] = {};
    EXPECT_TRUE(driver
                    ->MemcpyAsync(device, in, sizeof(in),
                                  CopyKind::kHostToDevice, stream->get())
                    .ok());
    EXPECT_TRUE(driver
                    ->MemcpyAsync(out, device, sizeof(out),
                                  CopyKind::kDeviceToHost, stream->get())
                    .ok());
    EXPECT_STREQ(out, "openreg");
    ExpectError(driver->MemcpyAsync(out, device, sizeof(out),
                                    static_cast<CopyKind>(7), stream->get()),
                absl::StatusCode::kInvalidArgument, {"memcpy_async"});
    EXPECT_TRUE(driver->DeviceFree(0, device).ok());
  }
}

TEST_P(DriverTest, StreamGetPriority) {
  std::unique_ptr<Driver> driver = LoadOrDie(kMinimalPath, Config());
  ASSERT_NE(driver, nullptr);
  absl::StatusOr<DriverStream> stream = driver->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok());
  EXPECT_EQ(*driver->StreamGetPriority(stream->get()), 0);
}

// (Its missing stream_get_priority: optional_function_test.cc.)
TEST_P(DriverTest, A1_0DriverWorksWithOneContextAtATime) {
  std::unique_ptr<Driver> driver = LoadOrDie(kMinimalV1Path, Config());
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->name(), "minimal_v1");
  EXPECT_EQ(driver->abi_version_major(), 1u);
  EXPECT_EQ(driver->abi_version_minor(), 0u);
  absl::StatusOr<DriverStream> stream = driver->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  ExpectError(Driver::Create(driver->library(), Config()).status(),
              absl::StatusCode::kUnimplemented,
              {"context_create", "one process-wide instance"});
  EXPECT_TRUE(driver->StreamSynchronize(stream->get()).ok());
}

// --- On a shipped driver
// ------------------------------------------------------

constexpr int32_t kSimDeviceCount = 3;
constexpr uint64_t kSimDeviceMemory = uint64_t{1} << 20;  // 1 MiB

DriverConfig SimConfig() {
  DriverConfig config;
  config.device_count = kSimDeviceCount;
  config.device_memory_bytes = kSimDeviceMemory;
  return config;
}

class CpuSimDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    driver_ = LoadOrDie(ShippedDriverPath("cpu_sim"), SimConfig());
    ASSERT_NE(driver_, nullptr);
  }

  std::unique_ptr<Driver> driver_;
};

TEST_F(CpuSimDriverTest, Identity) {
  EXPECT_EQ(driver_->name(), "cpu_sim");
  EXPECT_FALSE(driver_->version().empty());
  EXPECT_EQ(driver_->path(), ShippedDriverPath("cpu_sim"));
  EXPECT_EQ(driver_->abi_version_major(),
            uint32_t{OPENREG_DRIVER_ABI_VERSION_MAJOR});
  EXPECT_EQ(driver_->validation(), nullptr);
}

TEST_F(CpuSimDriverTest, DeviceCountComesFromTheConfig) {
  absl::StatusOr<int32_t> count = driver_->DeviceCount();
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, kSimDeviceCount);
}

TEST_F(CpuSimDriverTest, DevicePropertiesOfEveryDevice) {
  for (int32_t device = 0; device < kSimDeviceCount; ++device) {
    SCOPED_TRACE(device);
    absl::StatusOr<DeviceProperties> props =
        driver_->GetDeviceProperties(device);
    ASSERT_TRUE(props.ok()) << props.status();
    EXPECT_EQ(props->name, "openreg cpu_sim device");
    EXPECT_EQ(props->total_memory_bytes, kSimDeviceMemory);
    EXPECT_LE(props->greatest_stream_priority, props->least_stream_priority);
    EXPECT_GE(props->concurrent_streams, 1);
  }
}

TEST_F(CpuSimDriverTest, DevicePropertiesOfMissingDeviceIsOutOfRange) {
  for (int32_t device : {-1, kSimDeviceCount}) {
    SCOPED_TRACE(device);
    ExpectError(driver_->GetDeviceProperties(device).status(),
                absl::StatusCode::kOutOfRange,
                {"openreg driver 'cpu_sim'", "get_device_properties",
                 "INVALID_DEVICE", absl::StrCat("device ", device)});
  }
}

TEST_F(CpuSimDriverTest, DeviceMallocPastCapacityIsResourceExhausted) {
  ExpectError(
      driver_->DeviceMalloc(0, kSimDeviceMemory + 1).status(),
      absl::StatusCode::kResourceExhausted,
      {"openreg driver 'cpu_sim'", "device_malloc failed", "OUT_OF_MEMORY",
       // The driver's own message.
       "cpu_sim: device 0 out of memory"});
}

TEST_F(CpuSimDriverTest, DeviceMemoryIsPerDeviceAndFreedMemoryIsReusable) {
  absl::StatusOr<void*> whole = driver_->DeviceMalloc(1, kSimDeviceMemory);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_NE(*whole, nullptr);

  absl::StatusOr<MemoryInfo> info = driver_->MemGetInfo(1);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->total_bytes, kSimDeviceMemory);
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
  EXPECT_EQ(attributes->size, kSimDeviceMemory);

  EXPECT_TRUE(driver_->DeviceFree(1, *whole).ok());
  EXPECT_TRUE(driver_->DeviceFree(2, *other).ok());
  absl::StatusOr<void*> again = driver_->DeviceMalloc(1, kSimDeviceMemory);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(driver_->DeviceFree(1, *again).ok());
}

TEST_F(CpuSimDriverTest, StreamAndEventQueriesReportCompletion) {
  absl::StatusOr<DriverStream> stream = driver_->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<DriverEvent> event = driver_->CreateEvent(0);
  ASSERT_TRUE(event.ok()) << event.status();

  // Unrecorded event: complete.
  absl::StatusOr<bool> event_done = driver_->EventQuery(event->get());
  ASSERT_TRUE(event_done.ok()) << event_done.status();
  EXPECT_TRUE(*event_done);

  ASSERT_TRUE(driver_->EventRecord(event->get(), stream->get()).ok());
  ASSERT_TRUE(driver_->StreamSynchronize(stream->get()).ok());
  absl::StatusOr<bool> stream_done = driver_->StreamQuery(stream->get());
  ASSERT_TRUE(stream_done.ok()) << stream_done.status();
  EXPECT_TRUE(*stream_done);
  event_done = driver_->EventQuery(event->get());
  ASSERT_TRUE(event_done.ok()) << event_done.status();
  EXPECT_TRUE(*event_done);

  EXPECT_TRUE(driver_->StreamWaitEvent(stream->get(), event->get()).ok());
  EXPECT_TRUE(driver_->EventSynchronize(event->get()).ok());
  EXPECT_TRUE(driver_->StreamSynchronize(stream->get()).ok());
  EXPECT_TRUE(driver_->DeviceSynchronize(0).ok());
}

TEST_F(CpuSimDriverTest, ElapsedTimeOfNonTimingEventsIsAnError) {
  absl::StatusOr<DriverStream> stream = driver_->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<DriverEvent> start = driver_->CreateEvent(0);
  absl::StatusOr<DriverEvent> end = driver_->CreateEvent(0);
  ASSERT_TRUE(start.ok()) << start.status();
  ASSERT_TRUE(end.ok()) << end.status();
  ASSERT_TRUE(driver_->EventRecord(start->get(), stream->get()).ok());
  ASSERT_TRUE(driver_->EventRecord(end->get(), stream->get()).ok());
  ASSERT_TRUE(driver_->StreamSynchronize(stream->get()).ok());

  ExpectError(
      driver_->EventElapsedMilliseconds(start->get(), end->get()).status(),
      absl::StatusCode::kInvalidArgument,
      {"openreg driver 'cpu_sim'", "event_elapsed_time failed",
       "INVALID_ARGUMENT"});
}

TEST_F(CpuSimDriverTest, ElapsedTimeOfTimingEvents) {
  absl::StatusOr<DriverStream> stream = driver_->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<DriverEvent> start =
      driver_->CreateEvent(0, EventFlags::kEnableTiming);
  absl::StatusOr<DriverEvent> end =
      driver_->CreateEvent(0, EventFlags::kEnableTiming);
  ASSERT_TRUE(start.ok()) << start.status();
  ASSERT_TRUE(end.ok()) << end.status();
  ASSERT_TRUE(driver_->EventRecord(start->get(), stream->get()).ok());
  ASSERT_TRUE(driver_->EventRecord(end->get(), stream->get()).ok());
  ASSERT_TRUE(driver_->StreamSynchronize(stream->get()).ok());

  absl::StatusOr<float> elapsed =
      driver_->EventElapsedMilliseconds(start->get(), end->get());
  ASSERT_TRUE(elapsed.ok()) << elapsed.status();
  EXPECT_GE(*elapsed, 0.0f);
}

openreg_status CountCall(void* user_data) {
  ++*static_cast<int*>(user_data);
  return OPENREG_SUCCESS;
}

openreg_status FailWithInternal(void* user_data) {
  ++*static_cast<int*>(user_data);
  return OPENREG_ERROR_INTERNAL;
}

TEST_F(CpuSimDriverTest, LaunchHostFuncRunsTheFunction) {
  absl::StatusOr<DriverStream> stream = driver_->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  int calls = 0;
  ASSERT_TRUE(driver_->LaunchHostFunc(stream->get(), CountCall, &calls).ok());
  ASSERT_TRUE(driver_->StreamSynchronize(stream->get()).ok());
  EXPECT_EQ(calls, 1);
}

TEST_F(CpuSimDriverTest, FailingHostFunctionIsAborted) {
  absl::StatusOr<DriverStream> stream = driver_->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  int calls = 0;
  // The ABI allows the failure to surface from the launch or (sticky) from
  // the next synchronize of the stream; either way it is kAborted.
  absl::Status status =
      driver_->LaunchHostFunc(stream->get(), FailWithInternal, &calls);
  if (status.ok()) status = driver_->StreamSynchronize(stream->get());
  ExpectError(status, absl::StatusCode::kAborted,
              {"openreg driver 'cpu_sim'", "LAUNCH_FAILURE"});
  EXPECT_EQ(calls, 1);
  // The failure is reported once; the stream is usable again.
  EXPECT_TRUE(driver_->StreamSynchronize(stream->get()).ok());
}

TEST_F(CpuSimDriverTest, HostMemoryRoundTrip) {
  absl::StatusOr<void*> host = driver_->HostMalloc(256);
  ASSERT_TRUE(host.ok()) << host.status();
  absl::StatusOr<PointerAttributes> attributes =
      driver_->GetPointerAttributes(*host);
  ASSERT_TRUE(attributes.ok()) << attributes.status();
  EXPECT_EQ(attributes->memory_type, OPENREG_MEMORY_TYPE_HOST);
  EXPECT_TRUE(driver_->HostFree(*host).ok());
}

TEST_F(CpuSimDriverTest, CopyThroughTheDevice) {
  absl::StatusOr<DriverStream> stream = driver_->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<void*> device = driver_->DeviceMalloc(0, 64);
  ASSERT_TRUE(device.ok()) << device.status();
  std::vector<uint8_t> in(64, 7);
  std::vector<uint8_t> out(64, 0);
  ASSERT_TRUE(driver_->MemsetAsync(*device, 0, 64, stream->get()).ok());
  ASSERT_TRUE(driver_
                  ->MemcpyAsync(*device, in.data(), 32, CopyKind::kHostToDevice,
                                stream->get())
                  .ok());
  ASSERT_TRUE(driver_
                  ->MemcpyAsync(out.data(), *device, 64,
                                CopyKind::kDeviceToHost, stream->get())
                  .ok());
  ASSERT_TRUE(driver_->StreamSynchronize(stream->get()).ok());
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out[i], i < 32 ? 7 : 0) << "byte " << i;
  }
  EXPECT_TRUE(driver_->DeviceFree(0, *device).ok());
}

// --- Loading and creating contexts
// ----------------------------------------------

TEST(DriverLoadTest, InvalidConfigFailsInContextCreate) {
  DriverConfig config;
  config.options = "bogus=1";
  for (const char* path : {kMinimalPath, kMinimalV1Path}) {
    ExpectError(Driver::Load(path, config).status(),
                absl::StatusCode::kInvalidArgument,
                {"context_create", "unknown option in 'bogus=1'"});
  }
  const std::string cpu_sim = ShippedDriverPath("cpu_sim");
  config = SimConfig();
  config.device_count = -1;
  ExpectError(
      Driver::Load(cpu_sim, config).status(),
      absl::StatusCode::kInvalidArgument,
      {"openreg driver 'cpu_sim'", "context_create failed", "device_count -1"});
  config = SimConfig();
  config.options = "no_such_option=1";
  ExpectError(Driver::Load(cpu_sim, config).status(),
              absl::StatusCode::kInvalidArgument,
              {"context_create failed", "no_such_option"});
  // A failed context_create leaves nothing behind: a context can be made.
  EXPECT_NE(LoadOrDie(cpu_sim, SimConfig()), nullptr);
}

TEST(DriverLoadTest, DefaultConfigUsesTheDriverDefaults) {
  std::unique_ptr<Driver> driver =
      LoadOrDie(ShippedDriverPath("cpu_sim"), DriverConfig{});
  ASSERT_NE(driver, nullptr);
  absl::StatusOr<int32_t> count = driver->DeviceCount();
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_GE(*count, 1);
}

// The 2.0 counterpart of "init again after shutdown": contexts come and go,
// and several live at once, each with its own devices.
TEST(DriverLoadTest, ContextsOfAShippedDriverComeAndGo) {
  for (const std::string name : {"cpu_sim", "threaded_sim"}) {
    SCOPED_TRACE(name);
    for (int round = 0; round < 3; ++round) {
      SCOPED_TRACE(round);
      std::unique_ptr<Driver> driver =
          LoadOrDie(ShippedDriverPath(name), SimConfig());
      ASSERT_NE(driver, nullptr);
      DriverConfig one_device = SimConfig();
      one_device.device_count = 1;
      absl::StatusOr<std::unique_ptr<Driver>> second =
          Driver::Create(driver->library(), one_device);
      ASSERT_TRUE(second.ok()) << second.status();
      EXPECT_EQ(*driver->DeviceCount(), kSimDeviceCount);
      EXPECT_EQ(*(*second)->DeviceCount(), 1);
    }
  }
}

TEST(DriverLoadTest, BrokenLibraryFailsToLoad) {
  ExpectError(Driver::Load(BrokenDriverPath("wrong_major"), {}).status(),
              absl::StatusCode::kFailedPrecondition, {"3.2", "2.2"});
  ExpectError(
      Driver::Load("tests/core/driver/broken/not_a_library.so", {}).status(),
      absl::StatusCode::kInvalidArgument, {"as a shared library"});
}

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
