// init and shutdown: defaults, config validation, NOT_INITIALIZED, and what
// shutdown releases and drops.
#include <atomic>
#include <chrono>
#include <initializer_list>
#include <thread>

#include "tests/conformance/driver_fixture.h"
#include "tests/conformance/gate.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(LifecycleTest, UninitializedDriverTest);

openreg_status Succeed(void*) { return OPENREG_SUCCESS; }

TEST_P(LifecycleTest, CallsBeforeInitAreNotInitialized) {
  int32_t count = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->get_device_count(&count)));
  openreg_device_properties props{};
  props.struct_size = sizeof(props);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->get_device_properties(0, &props)));
  void* ptr = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->device_malloc(0, 16, &ptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->device_free(0, nullptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->host_malloc(16, &ptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->host_free(nullptr)));
  openreg_pointer_attributes attributes{};
  attributes.struct_size = sizeof(attributes);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->pointer_get_attributes(&count, &attributes)));
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->mem_get_info(0, &free_bytes, &total_bytes)));
  char buffer[4] = {};
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->memcpy_async(buffer, buffer + 2, 2,
                                           OPENREG_MEMCPY_HOST_TO_HOST,
                                           nullptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->memset_async(buffer, 0, 4, nullptr)));
  openreg_stream stream = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->stream_create(0, 0, &stream)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->stream_destroy(stream)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->stream_query(stream)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->stream_synchronize(stream)));
  openreg_event event = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->stream_wait_event(stream, event)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_create(0, 0, &event)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_destroy(event)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_record(event, stream)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_query(event)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_synchronize(event)));
  float ms = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_elapsed_time(event, event, &ms)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->launch_host_func(stream, Succeed, nullptr)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->device_synchronize(0)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED, api_->shutdown()));
}

// The defaults are the driver's own; a later test compares against them.
struct Defaults {
  int32_t device_count = 0;
  uint64_t device_memory_bytes = 0;
};

Defaults ReadDefaults(const openreg_driver_api* api) {
  Defaults defaults;
  EXPECT_EQ(api->init(nullptr), OPENREG_SUCCESS) << api->last_error_message();
  EXPECT_EQ(api->get_device_count(&defaults.device_count), OPENREG_SUCCESS);
  uint64_t free_bytes = 0;
  EXPECT_EQ(api->mem_get_info(0, &free_bytes, &defaults.device_memory_bytes),
            OPENREG_SUCCESS);
  EXPECT_EQ(free_bytes, defaults.device_memory_bytes);
  EXPECT_EQ(api->shutdown(), OPENREG_SUCCESS);
  return defaults;
}

TEST_P(LifecycleTest, NullConfigGivesUsableDefaults) {
  const Defaults defaults = ReadDefaults(api_);
  EXPECT_GE(defaults.device_count, 1);
  EXPECT_GT(defaults.device_memory_bytes, 0u);
}

TEST_P(LifecycleTest, ZeroFieldsAndEmptyOptionsSelectTheDefaults) {
  const Defaults defaults = ReadDefaults(api_);
  for (const char* options : {static_cast<const char*>(nullptr), "", " , ,"}) {
    openreg_driver_config config = Config(0, 0);
    config.options = options;
    ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS)
        << api_->last_error_message();
    int32_t count = 0;
    EXPECT_EQ(api_->get_device_count(&count), OPENREG_SUCCESS);
    EXPECT_EQ(count, defaults.device_count);
    uint64_t free_bytes = 0;
    uint64_t total_bytes = 0;
    EXPECT_EQ(api_->mem_get_info(0, &free_bytes, &total_bytes),
              OPENREG_SUCCESS);
    EXPECT_EQ(total_bytes, defaults.device_memory_bytes);
    EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS);
  }
}

TEST_P(LifecycleTest, UnknownOptionKeyIsRejectedAndLeavesItUninitialized) {
  const openreg_driver_config config =
      Config(1, kCapacity, "openreg_conformance_no_such_key=1");
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->init(&config)));
  int32_t count = 0;
  EXPECT_EQ(api_->get_device_count(&count), OPENREG_ERROR_NOT_INITIALIZED);
}

TEST_P(LifecycleTest, BadConfigFieldsAreRejected) {
  const openreg_driver_config negative = Config(-1, 0);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->init(&negative)));
  openreg_driver_config truncated = Config(1, 0);
  truncated.struct_size = sizeof(size_t);
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->init(&truncated)));
  int32_t count = 0;
  EXPECT_EQ(api_->get_device_count(&count), OPENREG_ERROR_NOT_INITIALIZED);
}

TEST_P(LifecycleTest, ConfigStructSizeLimitsWhatIsRead) {
  const Defaults defaults = ReadDefaults(api_);
  // A writer that knew only device_count: the other fields hold garbage the
  // driver must not read.
  openreg_driver_config config =
      Config(4, 12345, "openreg_conformance_garbage=1");
  config.struct_size = OPENREG_STRUCT_SIZE(openreg_driver_config, device_count);
  ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS)
      << api_->last_error_message();
  int32_t count = 0;
  EXPECT_EQ(api_->get_device_count(&count), OPENREG_SUCCESS);
  EXPECT_EQ(count, 4);
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_EQ(api_->mem_get_info(0, &free_bytes, &total_bytes), OPENREG_SUCCESS);
  EXPECT_EQ(total_bytes, defaults.device_memory_bytes);
  EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS);
}

TEST_P(LifecycleTest, SecondInitWithoutShutdownFails) {
  const openreg_driver_config config = Config(1, kCapacity);
  ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->init(&config)));
  EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS);
}

TEST_P(LifecycleTest, ShutdownReleasesEverythingAndAllowsReinit) {
  const openreg_driver_config config = Config(1, kCapacity);
  ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS);
  void* device_ptr = nullptr;
  void* host_ptr = nullptr;
  openreg_stream stream = nullptr;
  openreg_event event = nullptr;
  ASSERT_EQ(api_->device_malloc(0, kCapacity, &device_ptr), OPENREG_SUCCESS);
  ASSERT_EQ(api_->host_malloc(64, &host_ptr), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_create(0, 0, &stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_create(0, 0, &event), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(event, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->shutdown(), OPENREG_SUCCESS);

  ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS);
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_EQ(api_->mem_get_info(0, &free_bytes, &total_bytes), OPENREG_SUCCESS);
  EXPECT_EQ(free_bytes, kCapacity);
  // Handles from before the shutdown are dead, not aliases of new ones.
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->stream_query(stream)));
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->event_query(event)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(0, device_ptr)));
  EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS);
}

openreg_status Count(void* counter) {
  ++*static_cast<std::atomic<int>*>(counter);
  return OPENREG_SUCCESS;
}

TEST_P(LifecycleTest, ShutdownDropsQueuedWorkWithoutRunningIt) {
  const openreg_driver_config config = Config(1, kCapacity);
  ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS);
  openreg_stream stream = nullptr;
  ASSERT_EQ(api_->stream_create(0, 0, &stream), OPENREG_SUCCESS);
  Gate gate;
  ASSERT_EQ(gate.Launch(api_, stream), OPENREG_SUCCESS);
  ASSERT_TRUE(gate.AwaitStarted());
  std::atomic<int> ran{0};
  constexpr int kQueued = 20;
  for (int i = 0; i < kQueued; ++i) {
    ASSERT_EQ(api_->launch_host_func(stream, Count, &ran), OPENREG_SUCCESS);
  }
  // Shutdown waits for the running item, so the gate opens a while after
  // shutdown began.
  std::thread opener([&gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    gate.Open();
  });
  const bool gate_done_before_shutdown = gate.finished();
  EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS) << api_->last_error_message();
  opener.join();
  EXPECT_TRUE(gate.finished());
  if (gate.ran_inline()) {
    // A synchronous driver ran everything at launch.
    EXPECT_EQ(ran.load(), kQueued);
  } else if (!gate_done_before_shutdown) {
    // The gate was still running when shutdown came: what followed it was
    // still queued, and is dropped.
    EXPECT_EQ(ran.load(), 0);
  }
}

}  // namespace
}  // namespace openreg::conformance
