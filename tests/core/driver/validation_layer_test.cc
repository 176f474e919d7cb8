// The driver validation layer (core/driver/validation_layer.h): each kind of
// misuse is rejected with the status the ABI prescribes and a message naming
// the call, the process keeps working, the first misuse is kept, and correct
// programs pass through untouched on both shipped drivers (threaded_sim runs
// host functions on its own threads, which call back through the layer).
#include "core/driver/validation_layer.h"

#include <dlfcn.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/driver/driver.h"
#include "core/driver/driver_loader.h"
#include "driver_abi/openreg_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace openreg {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int32_t kDeviceCount = 2;
constexpr uint64_t kDeviceMemory = uint64_t{1} << 20;

void ExpectMisuse(const absl::Status& status, absl::StatusCode code,
                  std::initializer_list<std::string> fragments) {
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("openreg driver validation: "));
  for (const std::string& fragment : fragments) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(fragment));
  }
}

class ValidationLayerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    DriverConfig config;
    config.device_count = kDeviceCount;
    config.device_memory_bytes = kDeviceMemory;
    config.validation = true;
    const std::string path =
        "plugins/" + GetParam() + "/libopenreg_" + GetParam() + ".so";
    // Keep the library mapped after the Driver unloads it, as the core does
    // for the life of the process: threaded_sim's process-wide state must not
    // be unmapped while it still holds allocations (LeakSanitizer would
    // report them).
    ASSERT_NE(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr)
        << dlerror();
    absl::StatusOr<std::unique_ptr<Driver>> driver = Driver::Load(path, config);
    ASSERT_TRUE(driver.ok()) << driver.status();
    driver_ = *std::move(driver);
    ASSERT_NE(driver_->validation(), nullptr);
  }

  std::string FirstMisuse() const {
    return driver_->validation()->first_misuse();
  }

  openreg_stream Stream(int32_t device) {
    absl::StatusOr<openreg_stream> stream = driver_->StreamCreate(device, 0);
    EXPECT_TRUE(stream.ok()) << stream.status();
    return stream.value_or(nullptr);
  }
  openreg_event Event(int32_t device, uint32_t flags) {
    absl::StatusOr<openreg_event> event = driver_->EventCreate(device, flags);
    EXPECT_TRUE(event.ok()) << event.status();
    return event.value_or(nullptr);
  }
  char* DeviceMemory(int32_t device, size_t size) {
    absl::StatusOr<void*> ptr = driver_->DeviceMalloc(device, size);
    EXPECT_TRUE(ptr.ok()) << ptr.status();
    return static_cast<char*>(ptr.value_or(nullptr));
  }

  std::unique_ptr<Driver> driver_;
};

INSTANTIATE_TEST_SUITE_P(ShippedDrivers, ValidationLayerTest,
                         ::testing::Values("cpu_sim", "threaded_sim"));

openreg_status Succeed(void*) { return OPENREG_SUCCESS; }

// A host function that uses the driver from the driver's thread.
struct NestedCall {
  const Driver* driver;
  openreg_event event;
  bool ok = false;
};
openreg_status QueryFromHostFunction(void* user_data) {
  auto* call = static_cast<NestedCall*>(user_data);
  call->ok = call->driver->EventQuery(call->event).ok();
  return OPENREG_SUCCESS;
}

TEST_P(ValidationLayerTest, CorrectProgramPassesThroughUntouched) {
  openreg_stream s0 = Stream(0);
  openreg_stream s1 = Stream(1);
  openreg_event start = Event(0, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event end = Event(1, OPENREG_EVENT_ENABLE_TIMING);
  char* d0 = DeviceMemory(0, 4096);
  char* d1 = DeviceMemory(1, 4096);
  absl::StatusOr<void*> pinned = driver_->HostMalloc(4096);
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  std::vector<char> pageable(4096, 7);

  ASSERT_TRUE(driver_->EventRecord(start, s0).ok());
  ASSERT_TRUE(driver_->MemcpyAsync(d0, pageable.data(), 4096,
                                   OPENREG_MEMCPY_HOST_TO_DEVICE, s0)
                  .ok());
  ASSERT_TRUE(driver_->MemsetAsync(d0 + 100, 1, 200, s0).ok());
  // Interior pointers and the last byte of an allocation are fine.
  ASSERT_TRUE(driver_->MemcpyAsync(static_cast<char*>(*pinned) + 4095,
                                   d0 + 4095, 1,
                                   OPENREG_MEMCPY_DEVICE_TO_HOST, s0)
                  .ok());
  ASSERT_TRUE(driver_->EventRecord(start, s0).ok());
  // Cross-device waits and copies are allowed.
  ASSERT_TRUE(driver_->StreamWaitEvent(s1, start).ok());
  ASSERT_TRUE(driver_->MemcpyAsync(d1, d0, 4096,
                                   OPENREG_MEMCPY_DEVICE_TO_DEVICE, s1)
                  .ok());
  NestedCall nested{driver_.get(), start};
  ASSERT_TRUE(driver_->LaunchHostFunc(s1, QueryFromHostFunction, &nested).ok());
  ASSERT_TRUE(driver_->EventRecord(end, s1).ok());
  ASSERT_TRUE(driver_->StreamSynchronize(s1).ok());
  EXPECT_TRUE(nested.ok);
  EXPECT_TRUE(driver_->EventElapsedMilliseconds(start, end).ok());
  ASSERT_TRUE(driver_->DeviceSynchronize(0).ok());
  // NULL frees and zero-byte copies need no pointers.
  EXPECT_TRUE(driver_->DeviceFree(0, nullptr).ok());
  EXPECT_TRUE(driver_->MemcpyAsync(nullptr, nullptr, 0,
                                   OPENREG_MEMCPY_DEVICE_TO_DEVICE, s0)
                  .ok());

  EXPECT_TRUE(driver_->DeviceFree(0, d0).ok());
  EXPECT_TRUE(driver_->DeviceFree(1, d1).ok());
  EXPECT_TRUE(driver_->HostFree(*pinned).ok());
  EXPECT_TRUE(driver_->EventDestroy(start).ok());
  EXPECT_TRUE(driver_->EventDestroy(end).ok());
  EXPECT_TRUE(driver_->StreamDestroy(s0).ok());
  EXPECT_TRUE(driver_->StreamDestroy(s1).ok());
  EXPECT_THAT(FirstMisuse(), IsEmpty());
}

TEST_P(ValidationLayerTest, DestroyedStreamIsNamedAtEveryUse) {
  openreg_stream stream = Stream(0);
  openreg_event event = Event(0, OPENREG_EVENT_DEFAULT);
  char* device = DeviceMemory(0, 64);
  ASSERT_TRUE(driver_->StreamDestroy(stream).ok());
  const std::string destroyed = "was destroyed by stream_destroy";
  ExpectMisuse(driver_->StreamQuery(stream).status(),
               absl::StatusCode::kInvalidArgument,
               {"stream_query(stream=0x", destroyed});
  ExpectMisuse(driver_->StreamSynchronize(stream),
               absl::StatusCode::kInvalidArgument,
               {"stream_synchronize(", destroyed});
  ExpectMisuse(driver_->LaunchHostFunc(stream, Succeed, nullptr),
               absl::StatusCode::kInvalidArgument,
               {"launch_host_func(stream=0x", destroyed});
  ExpectMisuse(driver_->MemsetAsync(device, 0, 64, stream),
               absl::StatusCode::kInvalidArgument,
               {"memset_async(", destroyed});
  ExpectMisuse(driver_->EventRecord(event, stream),
               absl::StatusCode::kInvalidArgument,
               {"event_record(", destroyed});
  ExpectMisuse(driver_->StreamDestroy(stream),
               absl::StatusCode::kInvalidArgument,
               {"stream_destroy(", destroyed});
  EXPECT_TRUE(driver_->DeviceFree(0, device).ok());
  EXPECT_TRUE(driver_->EventDestroy(event).ok());
}

// stream_get_priority (ABI 1.1, optional) is in the layer's table because
// both shipped drivers implement it, and is checked like the rest.
TEST_P(ValidationLayerTest, StreamGetPriorityIsChecked) {
  const openreg_driver_api* table = driver_->validation()->api();
  ASSERT_EQ(table->struct_size, OPENREG_DRIVER_API_STRUCT_SIZE_V1_1);
  ASSERT_NE(table->stream_get_priority, nullptr);
  openreg_stream stream = Stream(0);
  absl::StatusOr<int32_t> priority = driver_->StreamGetPriority(stream);
  ASSERT_TRUE(priority.ok()) << priority.status();
  EXPECT_EQ(*priority, 0);
  EXPECT_EQ(table->stream_get_priority(stream, nullptr),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(table->last_error_message()),
              HasSubstr("stream_get_priority(stream=0x"));
  EXPECT_THAT(std::string(table->last_error_message()),
              HasSubstr("'priority' is NULL"));
  ASSERT_TRUE(driver_->StreamDestroy(stream).ok());
  ExpectMisuse(driver_->StreamGetPriority(stream).status(),
               absl::StatusCode::kInvalidArgument,
               {"stream_get_priority(stream=0x",
                "was destroyed by stream_destroy"});
}

TEST_P(ValidationLayerTest, MadeUpAndNullHandlesAreNamed) {
  int not_a_handle = 0;
  auto* fake_stream = reinterpret_cast<openreg_stream>(&not_a_handle);
  auto* fake_event = reinterpret_cast<openreg_event>(&not_a_handle);
  ExpectMisuse(driver_->StreamQuery(fake_stream).status(),
               absl::StatusCode::kInvalidArgument,
               {"stream_create never returned it"});
  ExpectMisuse(driver_->EventQuery(fake_event).status(),
               absl::StatusCode::kInvalidArgument,
               {"event_query(", "event_create never returned it"});
  ExpectMisuse(driver_->StreamSynchronize(nullptr),
               absl::StatusCode::kInvalidArgument,
               {"'stream' is NULL", "no default stream"});
}

TEST_P(ValidationLayerTest, DestroyedEventIsNamed) {
  openreg_stream stream = Stream(0);
  openreg_event event = Event(0, OPENREG_EVENT_DEFAULT);
  ASSERT_TRUE(driver_->EventDestroy(event).ok());
  ExpectMisuse(driver_->StreamWaitEvent(stream, event),
               absl::StatusCode::kInvalidArgument,
               {"stream_wait_event(", "was destroyed by event_destroy"});
  ExpectMisuse(driver_->EventSynchronize(event),
               absl::StatusCode::kInvalidArgument,
               {"event_synchronize(", "was destroyed by event_destroy"});
  EXPECT_TRUE(driver_->StreamDestroy(stream).ok());
}

TEST_P(ValidationLayerTest, EventRecordedOnAStreamOfAnotherDevice) {
  openreg_stream stream = Stream(1);
  openreg_event event = Event(0, OPENREG_EVENT_DEFAULT);
  ExpectMisuse(driver_->EventRecord(event, stream),
               absl::StatusCode::kInvalidArgument,
               {"event_record(event=0x",
                "the event belongs to device 0 but the stream to device 1"});
  EXPECT_TRUE(driver_->EventDestroy(event).ok());
  EXPECT_TRUE(driver_->StreamDestroy(stream).ok());
}

TEST_P(ValidationLayerTest, FreeingWhatIsNotAnAllocation) {
  int on_the_stack = 0;
  ExpectMisuse(driver_->DeviceFree(0, &on_the_stack),
               absl::StatusCode::kInvalidArgument,
               {"device_free(device=0, ptr=0x",
                "was never returned by device_malloc"});
  char* device = DeviceMemory(1, 1024);
  ExpectMisuse(driver_->DeviceFree(0, device),
               absl::StatusCode::kInvalidArgument,
               {"was allocated on device 1, not on device 0"});
  ExpectMisuse(driver_->DeviceFree(1, device + 16),
               absl::StatusCode::kInvalidArgument,
               {"lies 16 bytes inside an allocation of device memory of "
                "device 1"});
  ASSERT_TRUE(driver_->DeviceFree(1, device).ok());
  ExpectMisuse(driver_->DeviceFree(1, device),
               absl::StatusCode::kInvalidArgument, {"double free"});

  absl::StatusOr<void*> pinned = driver_->HostMalloc(256);
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  ExpectMisuse(driver_->DeviceFree(0, *pinned),
               absl::StatusCode::kInvalidArgument,
               {"is pinned host memory; free it with host_free"});
  ExpectMisuse(driver_->HostFree(&on_the_stack),
               absl::StatusCode::kInvalidArgument,
               {"host_free(ptr=0x", "never returned by host_malloc"});
  ASSERT_TRUE(driver_->HostFree(*pinned).ok());
  ExpectMisuse(driver_->HostFree(*pinned), absl::StatusCode::kInvalidArgument,
               {"double free"});
}

TEST_P(ValidationLayerTest, CopiesOutsideTheirAllocationOrOfTheWrongKind) {
  openreg_stream stream = Stream(0);
  char* device = DeviceMemory(0, 1024);
  absl::StatusOr<void*> pinned = driver_->HostMalloc(256);
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  std::vector<char> host(2048);

  ExpectMisuse(driver_->MemcpyAsync(device + 1000, host.data(), 100,
                                    OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
               absl::StatusCode::kInvalidArgument,
               {"memcpy_async(dst=0x", "'dst': 100 bytes from",
                "run 76 bytes past the end of its allocation"});
  ExpectMisuse(driver_->MemcpyAsync(host.data(), device, 16,
                                    OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
               absl::StatusCode::kInvalidArgument,
               {"'dst' 0x", "is not device memory"});
  ExpectMisuse(driver_->MemcpyAsync(device, host.data(), 16,
                                    OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
               absl::StatusCode::kInvalidArgument,
               {"'dst' 0x", "is device memory of device 0, but host memory"});
  ExpectMisuse(driver_->MemcpyAsync(*pinned, device, 512,
                                    OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
               absl::StatusCode::kInvalidArgument,
               {"past the end of its pinned host allocation"});
  ExpectMisuse(driver_->MemcpyAsync(device, host.data(), 16, 9, stream),
               absl::StatusCode::kInvalidArgument,
               {"'kind' is 9; expected an OPENREG_MEMCPY_* value"});
  ExpectMisuse(driver_->MemsetAsync(device, 0, 1025, stream),
               absl::StatusCode::kInvalidArgument,
               {"memset_async(ptr=0x", "run 1 bytes past the end"});
  ASSERT_TRUE(driver_->DeviceFree(0, device).ok());
  ExpectMisuse(driver_->MemcpyAsync(host.data(), device + 8, 8,
                                    OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
               absl::StatusCode::kInvalidArgument,
               {"points into device memory that was freed", "use after free"});
  EXPECT_TRUE(driver_->HostFree(*pinned).ok());
  EXPECT_TRUE(driver_->StreamDestroy(stream).ok());
}

TEST_P(ValidationLayerTest, TimingNeedsRecordedTimingEvents) {
  openreg_stream stream = Stream(0);
  openreg_event plain = Event(0, OPENREG_EVENT_DEFAULT);
  openreg_event timed = Event(0, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event unrecorded = Event(0, OPENREG_EVENT_ENABLE_TIMING);
  ASSERT_TRUE(driver_->EventRecord(plain, stream).ok());
  ASSERT_TRUE(driver_->EventRecord(timed, stream).ok());
  ExpectMisuse(driver_->EventElapsedMilliseconds(plain, timed).status(),
               absl::StatusCode::kInvalidArgument,
               {"event_elapsed_time(start=0x",
                "'start' was created without OPENREG_EVENT_ENABLE_TIMING"});
  ExpectMisuse(driver_->EventElapsedMilliseconds(timed, unrecorded).status(),
               absl::StatusCode::kInvalidArgument,
               {"'end' was never recorded"});
  ASSERT_TRUE(driver_->StreamSynchronize(stream).ok());
  for (openreg_event event : {plain, timed, unrecorded}) {
    EXPECT_TRUE(driver_->EventDestroy(event).ok());
  }
  EXPECT_TRUE(driver_->StreamDestroy(stream).ok());
}

TEST_P(ValidationLayerTest, DeviceIndexOutOfRangeIsInvalidDevice) {
  for (int32_t device : {-1, kDeviceCount}) {
    ExpectMisuse(driver_->DeviceMalloc(device, 16).status(),
                 absl::StatusCode::kOutOfRange,
                 {"device_malloc(device=", "valid indices are 0 to 1"});
    ExpectMisuse(driver_->StreamCreate(device, 0).status(),
                 absl::StatusCode::kOutOfRange, {"stream_create(device="});
    ExpectMisuse(driver_->DeviceSynchronize(device),
                 absl::StatusCode::kOutOfRange, {"device_synchronize("});
  }
}

TEST_P(ValidationLayerTest, FirstMisuseIsKeptAndWorkGoesOn) {
  EXPECT_THAT(FirstMisuse(), IsEmpty());
  openreg_stream stream = Stream(0);
  ASSERT_TRUE(driver_->StreamDestroy(stream).ok());
  EXPECT_FALSE(driver_->StreamSynchronize(stream).ok());
  int on_the_stack = 0;
  EXPECT_FALSE(driver_->DeviceFree(0, &on_the_stack).ok());
  EXPECT_THAT(FirstMisuse(), HasSubstr("stream_synchronize(stream=0x"));
  EXPECT_THAT(FirstMisuse(), HasSubstr("was destroyed by stream_destroy"));
  // The rejected calls reached nothing: the driver works as before.
  openreg_stream fresh = Stream(0);
  char* device = DeviceMemory(0, 64);
  EXPECT_TRUE(driver_->MemsetAsync(device, 3, 64, fresh).ok());
  EXPECT_TRUE(driver_->StreamSynchronize(fresh).ok());
  EXPECT_TRUE(driver_->DeviceFree(0, device).ok());
  EXPECT_TRUE(driver_->StreamDestroy(fresh).ok());
}

// Through the raw table: calls outside init/shutdown, and handles from
// before a shutdown.
TEST(ValidationLayerLifecycleTest, ShutdownEndsEveryHandle) {
  absl::StatusOr<LoadedDriverLibrary> library =
      LoadDriverLibrary("plugins/cpu_sim/libopenreg_cpu_sim.so");
  ASSERT_TRUE(library.ok()) << library.status();
  {
    absl::StatusOr<std::unique_ptr<ValidationLayer>> layer =
        ValidationLayer::Create(library->api);
    ASSERT_TRUE(layer.ok()) << layer.status();
    const openreg_driver_api* api = (*layer)->api();
    EXPECT_STREQ(api->driver_name, "cpu_sim");

    openreg_stream stream = nullptr;
    EXPECT_EQ(api->stream_create(0, 0, &stream),
              OPENREG_ERROR_NOT_INITIALIZED);
    EXPECT_THAT(api->last_error_message(),
                HasSubstr("stream_create(device=0, priority=0, stream=0x"));
    EXPECT_THAT(api->last_error_message(), HasSubstr("init must succeed"));

    ASSERT_EQ(api->init(nullptr), OPENREG_SUCCESS);
    EXPECT_EQ(api->init(nullptr), OPENREG_ERROR_INVALID_ARGUMENT);
    EXPECT_THAT(api->last_error_message(), HasSubstr("already initialized"));
    ASSERT_EQ(api->stream_create(0, 0, &stream), OPENREG_SUCCESS);
    ASSERT_EQ(api->shutdown(), OPENREG_SUCCESS);
    EXPECT_EQ(api->stream_query(stream), OPENREG_ERROR_NOT_INITIALIZED);
    ASSERT_EQ(api->init(nullptr), OPENREG_SUCCESS);
    EXPECT_EQ(api->stream_query(stream), OPENREG_ERROR_INVALID_ARGUMENT);
    EXPECT_THAT(api->last_error_message(),
                HasSubstr("destroyed by stream_destroy or shutdown"));
    // A driver failure still carries the driver's own message.
    void* ptr = nullptr;
    EXPECT_EQ(api->device_malloc(0, uint64_t{1} << 62, &ptr),
              OPENREG_ERROR_OUT_OF_MEMORY);
    EXPECT_THAT(api->last_error_message(), HasSubstr("cpu_sim"));
    EXPECT_EQ(api->shutdown(), OPENREG_SUCCESS);

    // One layer at a time.
    absl::StatusOr<std::unique_ptr<ValidationLayer>> second =
        ValidationLayer::Create(library->api);
    EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(second.status().message()),
                HasSubstr("another validation layer is active"));
  }
  absl::StatusOr<std::unique_ptr<ValidationLayer>> after =
      ValidationLayer::Create(library->api);
  EXPECT_TRUE(after.ok()) << after.status();
  after->reset();
  UnloadDriverLibrary(*library);
}

// A driver that reports success without a handle is a driver bug.
openreg_status StreamCreateWithoutStream(int32_t, int32_t,
                                         openreg_stream* stream) {
  *stream = nullptr;
  return OPENREG_SUCCESS;
}

TEST(ValidationLayerDriverBugTest, SuccessWithoutAHandleIsInternal) {
  absl::StatusOr<LoadedDriverLibrary> library =
      LoadDriverLibrary("plugins/cpu_sim/libopenreg_cpu_sim.so");
  ASSERT_TRUE(library.ok()) << library.status();
  openreg_driver_api buggy = *library->api;
  buggy.stream_create = StreamCreateWithoutStream;
  {
    absl::StatusOr<std::unique_ptr<ValidationLayer>> layer =
        ValidationLayer::Create(&buggy);
    ASSERT_TRUE(layer.ok()) << layer.status();
    const openreg_driver_api* api = (*layer)->api();
    ASSERT_EQ(api->init(nullptr), OPENREG_SUCCESS);
    openreg_stream stream = nullptr;
    EXPECT_EQ(api->stream_create(0, 0, &stream), OPENREG_ERROR_INTERNAL);
    EXPECT_THAT(api->last_error_message(),
                HasSubstr("driver bug: the call succeeded but returned a NULL "
                          "stream"));
    EXPECT_EQ(api->shutdown(), OPENREG_SUCCESS);
  }
  UnloadDriverLibrary(*library);
}

}  // namespace
}  // namespace openreg
