// The C++ Driver wrapper on the minimal driver, 2.0 and 1.0: contexts of one
// library coexist, owning handles destroy themselves, copies take a CopyKind;
// and driver status conversion.
#include "core/driver/driver.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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
    EXPECT_TRUE(driver->MemcpyAsync(device, in, sizeof(in),
                                    CopyKind::kHostToDevice, stream->get())
                    .ok());
    EXPECT_TRUE(driver->MemcpyAsync(out, device, sizeof(out),
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

TEST_P(DriverTest, A1_0DriverWorksButHasNoPriorityAndOneContext) {
  std::unique_ptr<Driver> driver = LoadOrDie(kMinimalV1Path, Config());
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->name(), "minimal_v1");
  EXPECT_EQ(driver->abi_version_major(), 1u);
  EXPECT_EQ(driver->abi_version_minor(), 0u);
  absl::StatusOr<DriverStream> stream = driver->CreateStream(0, 0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  ExpectError(driver->StreamGetPriority(stream->get()).status(),
              absl::StatusCode::kUnimplemented,
              {"openreg driver 'minimal_v1' implements driver ABI 1.0",
               "stream_get_priority needs ABI 1.1", "update the driver"});
  ExpectError(Driver::Create(driver->library(), Config()).status(),
              absl::StatusCode::kUnimplemented,
              {"context_create", "one process-wide instance"});
  EXPECT_TRUE(driver->StreamSynchronize(stream->get()).ok());
}

TEST(DriverLoadTest, InvalidConfigFailsInContextCreate) {
  DriverConfig config;
  config.options = "bogus=1";
  for (const char* path : {kMinimalPath, kMinimalV1Path}) {
    ExpectError(Driver::Load(path, config).status(),
                absl::StatusCode::kInvalidArgument,
                {"context_create", "unknown option in 'bogus=1'"});
  }
}

TEST(DriverLoadTest, BrokenLibraryFailsToLoad) {
  ExpectError(Driver::Load(BrokenDriverPath("wrong_major"), {}).status(),
              absl::StatusCode::kFailedPrecondition, {"3.0", "2.0"});
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
