// The driver validation layer (core/driver/validation_layer.h) on both
// shipped drivers, through a Driver with validation on: each kind of misuse
// is rejected with the status the ABI prescribes and a message naming the
// call, the process keeps working, the first misuse is kept, and correct
// programs pass through untouched (threaded_sim runs host functions on its
// own threads, which call back through the layer). Contexts and several
// layers at once: validation_layer_context_test.cc.
#include "core/driver/validation_layer.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/driver/driver.h"
#include "core/driver/driver_status.h"
#include "core/driver/validation_tracker.h"
#include "driver_abi/openreg_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/driver/test_paths.h"

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

// The parameter: the shipped driver's name.
class ValidationLayerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    DriverConfig config;
    config.device_count = kDeviceCount;
    config.device_memory_bytes = kDeviceMemory;
    config.validation = true;
    absl::StatusOr<std::unique_ptr<Driver>> driver =
        Driver::Load(ShippedDriverPath(GetParam()), config);
    ASSERT_TRUE(driver.ok()) << driver.status();
    driver_ = *std::move(driver);
    ASSERT_NE(driver_->validation(), nullptr);
  }

  const ValidationLayer& layer() const { return *driver_->validation(); }
  std::string FirstMisuse() const { return layer().first_misuse(); }

  // Raw handles, created and destroyed through the layer's table, so that a
  // test can use them after destroying them.
  openreg_stream Stream(int32_t device) {
    openreg_stream stream = nullptr;
    EXPECT_EQ(
        layer().api().stream_create(layer().context(), device, 0, &stream),
        OPENREG_SUCCESS)
        << LastError();
    return stream;
  }
  openreg_event Event(int32_t device, uint32_t flags) {
    openreg_event event = nullptr;
    EXPECT_EQ(
        layer().api().event_create(layer().context(), device, flags, &event),
        OPENREG_SUCCESS)
        << LastError();
    return event;
  }
  absl::Status DestroyStream(openreg_stream stream) {
    return Result(layer().api().stream_destroy(layer().context(), stream),
                  "stream_destroy");
  }
  absl::Status DestroyEvent(openreg_event event) {
    return Result(layer().api().event_destroy(layer().context(), event),
                  "event_destroy");
  }
  char* DeviceMemory(int32_t device, size_t size) {
    absl::StatusOr<void*> ptr = driver_->DeviceMalloc(device, size);
    EXPECT_TRUE(ptr.ok()) << ptr.status();
    return static_cast<char*>(ptr.value_or(nullptr));
  }

  std::unique_ptr<Driver> driver_;

 private:
  std::string LastError() const {
    return layer().api().last_error_message(layer().context());
  }
  absl::Status Result(openreg_status status, const char* function) const {
    return DriverStatusToAbsl(status, driver_->name(), function, LastError());
  }
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
  ASSERT_TRUE(
      driver_
          ->MemcpyAsync(d0, pageable.data(), 4096, CopyKind::kHostToDevice, s0)
          .ok());
  ASSERT_TRUE(driver_->MemsetAsync(d0 + 100, 1, 200, s0).ok());
  // Interior pointers and the last byte of an allocation are fine.
  ASSERT_TRUE(driver_
                  ->MemcpyAsync(static_cast<char*>(*pinned) + 4095, d0 + 4095,
                                1, CopyKind::kDeviceToHost, s0)
                  .ok());
  ASSERT_TRUE(driver_->EventRecord(start, s0).ok());
  // Cross-device waits and copies are allowed.
  ASSERT_TRUE(driver_->StreamWaitEvent(s1, start).ok());
  ASSERT_TRUE(
      driver_->MemcpyAsync(d1, d0, 4096, CopyKind::kDeviceToDevice, s1).ok());
  NestedCall nested{driver_.get(), start};
  ASSERT_TRUE(driver_->LaunchHostFunc(s1, QueryFromHostFunction, &nested).ok());
  ASSERT_TRUE(driver_->EventRecord(end, s1).ok());
  ASSERT_TRUE(driver_->StreamSynchronize(s1).ok());
  EXPECT_TRUE(nested.ok);
  EXPECT_TRUE(driver_->EventElapsedMilliseconds(start, end).ok());
  ASSERT_TRUE(driver_->DeviceSynchronize(0).ok());
  // NULL frees and zero-byte copies need no pointers.
  EXPECT_TRUE(driver_->DeviceFree(0, nullptr).ok());
  EXPECT_TRUE(
      driver_->MemcpyAsync(nullptr, nullptr, 0, CopyKind::kDeviceToDevice, s0)
          .ok());

  EXPECT_TRUE(driver_->DeviceFree(0, d0).ok());
  EXPECT_TRUE(driver_->DeviceFree(1, d1).ok());
  EXPECT_TRUE(driver_->HostFree(*pinned).ok());
  EXPECT_TRUE(DestroyEvent(start).ok());
  EXPECT_TRUE(DestroyEvent(end).ok());
  EXPECT_TRUE(DestroyStream(s0).ok());
  EXPECT_TRUE(DestroyStream(s1).ok());
  EXPECT_THAT(FirstMisuse(), IsEmpty());
}

TEST_P(ValidationLayerTest, DestroyedStreamIsNamedAtEveryUse) {
  openreg_stream stream = Stream(0);
  openreg_event event = Event(0, OPENREG_EVENT_DEFAULT);
  char* device = DeviceMemory(0, 64);
  ASSERT_TRUE(DestroyStream(stream).ok());
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
  ExpectMisuse(DestroyStream(stream), absl::StatusCode::kInvalidArgument,
               {"stream_destroy(", destroyed});
  EXPECT_TRUE(driver_->DeviceFree(0, device).ok());
  EXPECT_TRUE(DestroyEvent(event).ok());
}

// stream_get_priority (required since 2.0) is checked like the rest.
TEST_P(ValidationLayerTest, StreamGetPriorityIsChecked) {
  const openreg_driver_api& table = layer().api();
  ASSERT_EQ(table.struct_size, sizeof(openreg_driver_api));
  openreg_stream stream = Stream(0);
  absl::StatusOr<int32_t> priority = driver_->StreamGetPriority(stream);
  ASSERT_TRUE(priority.ok()) << priority.status();
  EXPECT_EQ(*priority, 0);
  EXPECT_EQ(table.stream_get_priority(layer().context(), stream, nullptr),
            OPENREG_ERROR_INVALID_ARGUMENT);
  const std::string message = table.last_error_message(layer().context());
  EXPECT_THAT(message, HasSubstr("stream_get_priority(stream=0x"));
  EXPECT_THAT(message, HasSubstr("'priority' is NULL"));
  ASSERT_TRUE(DestroyStream(stream).ok());
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
  ASSERT_TRUE(DestroyEvent(event).ok());
  ExpectMisuse(driver_->StreamWaitEvent(stream, event),
               absl::StatusCode::kInvalidArgument,
               {"stream_wait_event(", "was destroyed by event_destroy"});
  ExpectMisuse(driver_->EventSynchronize(event),
               absl::StatusCode::kInvalidArgument,
               {"event_synchronize(", "was destroyed by event_destroy"});
  EXPECT_TRUE(DestroyStream(stream).ok());
}

TEST_P(ValidationLayerTest, EventRecordedOnAStreamOfAnotherDevice) {
  openreg_stream stream = Stream(1);
  openreg_event event = Event(0, OPENREG_EVENT_DEFAULT);
  ExpectMisuse(driver_->EventRecord(event, stream),
               absl::StatusCode::kInvalidArgument,
               {"event_record(event=0x",
                "the event belongs to device 0 but the stream to device 1"});
  EXPECT_TRUE(DestroyEvent(event).ok());
  EXPECT_TRUE(DestroyStream(stream).ok());
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
                                    CopyKind::kHostToDevice, stream),
               absl::StatusCode::kInvalidArgument,
               {"memcpy_async(dst=0x", "'dst': 100 bytes from",
                "run 76 bytes past the end of its allocation"});
  ExpectMisuse(driver_->MemcpyAsync(host.data(), device, 16,
                                    CopyKind::kHostToDevice, stream),
               absl::StatusCode::kInvalidArgument,
               {"'dst' 0x", "is not device memory"});
  ExpectMisuse(driver_->MemcpyAsync(device, host.data(), 16,
                                    CopyKind::kDeviceToHost, stream),
               absl::StatusCode::kInvalidArgument,
               {"'dst' 0x", "is device memory of device 0, but host memory"});
  ExpectMisuse(driver_->MemcpyAsync(*pinned, device, 512,
                                    CopyKind::kDeviceToHost, stream),
               absl::StatusCode::kInvalidArgument,
               {"past the end of its pinned host allocation"});
  ExpectMisuse(driver_->MemcpyAsync(device, host.data(), 16,
                                    static_cast<CopyKind>(9), stream),
               absl::StatusCode::kInvalidArgument,
               {"'kind' is 9; expected an OPENREG_MEMCPY_* value"});
  ExpectMisuse(driver_->MemsetAsync(device, 0, 1025, stream),
               absl::StatusCode::kInvalidArgument,
               {"memset_async(ptr=0x", "run 1 bytes past the end"});
  ASSERT_TRUE(driver_->DeviceFree(0, device).ok());
  ExpectMisuse(driver_->MemcpyAsync(host.data(), device + 8, 8,
                                    CopyKind::kDeviceToHost, stream),
               absl::StatusCode::kInvalidArgument,
               {"points into device memory that was freed", "use after free"});
  EXPECT_TRUE(driver_->HostFree(*pinned).ok());
  EXPECT_TRUE(DestroyStream(stream).ok());
}

TEST_P(ValidationLayerTest, ExecutionOffsetIsCheckedAndItsAliasIsNamed) {
  const openreg_driver_api& table = layer().api();
  absl::StatusOr<intptr_t> offset = driver_->DeviceExecutionOffset(1);
  ASSERT_TRUE(offset.ok()) << offset.status();
  absl::StatusOr<intptr_t> again = driver_->DeviceExecutionOffset(1);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *offset);
  EXPECT_EQ(table.device_execution_offset(layer().context(), 0, nullptr),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(table.last_error_message(layer().context()),
              HasSubstr("'offset' is NULL"));
  ExpectMisuse(driver_->DeviceExecutionOffset(kDeviceCount).status(),
               absl::StatusCode::kOutOfRange,
               {"device_execution_offset(device=2", "does not exist"});
  if (*offset == 0) return;  // no execution view to confuse with the device's
  openreg_stream stream = Stream(1);
  char* device = DeviceMemory(1, 256);
  std::vector<char> host(64);
  ExpectMisuse(driver_->MemcpyAsync(host.data(), device + *offset, 64,
                                    CopyKind::kHostToHost, stream),
               absl::StatusCode::kInvalidArgument,
               {"'src' 0x", "is the execution view of device memory",
                "driver functions take the device address"});
  ExpectMisuse(driver_->MemsetAsync(device + *offset, 0, 64, stream),
               absl::StatusCode::kInvalidArgument,
               {"'ptr' 0x", "is the execution view of device memory"});
  ASSERT_TRUE(driver_->DeviceFree(1, device).ok());
  EXPECT_TRUE(DestroyStream(stream).ok());
}

// A driver whose offset changes is caught (the core caches the first).
TEST(ValidationTrackerTest, ExecutionOffsetMustStayConstant) {
  ValidationTracker tracker(/*device_count=*/1);
  EXPECT_TRUE(tracker.RecordExecutionOffset(0, 4096).ok());
  EXPECT_TRUE(tracker.RecordExecutionOffset(0, 4096).ok());
  const absl::Status changed = tracker.RecordExecutionOffset(0, 8192);
  EXPECT_EQ(changed.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(changed.message()),
              HasSubstr("reported execution offset 0x2000 for device 0, but "
                        "0x1000 before"));
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
    EXPECT_TRUE(DestroyEvent(event).ok());
  }
  EXPECT_TRUE(DestroyStream(stream).ok());
}

TEST_P(ValidationLayerTest, DeviceIndexOutOfRangeIsInvalidDevice) {
  for (int32_t device : {-1, kDeviceCount}) {
    ExpectMisuse(driver_->DeviceMalloc(device, 16).status(),
                 absl::StatusCode::kOutOfRange,
                 {"device_malloc(device=", "valid indices are 0 to 1"});
    ExpectMisuse(driver_->CreateStream(device, 0).status(),
                 absl::StatusCode::kOutOfRange, {"stream_create(device="});
    ExpectMisuse(driver_->DeviceSynchronize(device),
                 absl::StatusCode::kOutOfRange, {"device_synchronize("});
  }
}

TEST_P(ValidationLayerTest, FirstMisuseIsKeptAndWorkGoesOn) {
  EXPECT_THAT(FirstMisuse(), IsEmpty());
  openreg_stream stream = Stream(0);
  ASSERT_TRUE(DestroyStream(stream).ok());
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
  EXPECT_TRUE(DestroyStream(fresh).ok());
}

// A driver failure (not a misuse) still carries the driver's own message.
TEST_P(ValidationLayerTest, DriverFailureKeepsTheDriversMessage) {
  absl::Status status = driver_->DeviceMalloc(0, uint64_t{1} << 40).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam()));
  EXPECT_THAT(std::string(status.message()),
              ::testing::Not(HasSubstr("openreg driver validation")));
  EXPECT_THAT(FirstMisuse(), IsEmpty());
}

}  // namespace
}  // namespace openreg
