// One context's life: config validation and defaults in context_create, a
// null or destroyed context rejected by every function, and what
// context_destroy releases and drops. Several contexts at once are
// contexts_test.cc.
#include <atomic>
#include <chrono>
#include <initializer_list>
#include <thread>

#include "tests/conformance/driver_fixture.h"
#include "tests/conformance/gate.h"

namespace openreg::conformance {
namespace {

openreg_status Succeed(void*) { return OPENREG_SUCCESS; }

openreg_status Count(void* counter) {
  ++*static_cast<std::atomic<int>*>(counter);
  return OPENREG_SUCCESS;
}

class LifecycleFixture : public LoadedDriverTest {
 protected:
  // Every function but context_create and last_error_message, called with
  // `context` (null or destroyed) and otherwise valid arguments, fails with
  // INVALID_ARGUMENT and a message, read with a null context: there is no
  // live context to keep it in.
  void ExpectEveryFunctionRejects(openreg_context context,
                                  const Handles& handles) {
    auto rejects = [&](openreg_status status) {
      return FailsWith(nullptr, OPENREG_ERROR_INVALID_ARGUMENT, status);
    };
    int32_t count = 0;
    EXPECT_TRUE(rejects(api_->get_device_count(context, &count)));
    openreg_device_properties props{};
    props.struct_size = sizeof(props);
    EXPECT_TRUE(rejects(api_->get_device_properties(context, 0, &props)));
    void* ptr = nullptr;
    EXPECT_TRUE(rejects(api_->device_malloc(context, 0, 16, &ptr)));
    EXPECT_TRUE(rejects(api_->device_free(context, 0, handles.device_ptr)));
    EXPECT_TRUE(rejects(api_->host_malloc(context, 16, &ptr)));
    EXPECT_TRUE(rejects(api_->host_free(context, handles.host_ptr)));
    openreg_pointer_attributes attributes{};
    attributes.struct_size = sizeof(attributes);
    EXPECT_TRUE(rejects(api_->pointer_get_attributes(
        context, handles.device_ptr, &attributes)));
    uint64_t free_bytes = 0;
    uint64_t total_bytes = 0;
    EXPECT_TRUE(
        rejects(api_->mem_get_info(context, 0, &free_bytes, &total_bytes)));
    char buffer[4] = {};
    EXPECT_TRUE(rejects(api_->memcpy_async(context, buffer, buffer + 2, 2,
                                           OPENREG_MEMCPY_HOST_TO_HOST,
                                           handles.stream)));
    EXPECT_TRUE(rejects(
        api_->memset_async(context, handles.device_ptr, 0, 4, handles.stream)));
    openreg_stream stream = nullptr;
    EXPECT_TRUE(rejects(api_->stream_create(context, 0, 0, &stream)));
    EXPECT_TRUE(rejects(api_->stream_query(context, handles.stream)));
    EXPECT_TRUE(rejects(api_->stream_synchronize(context, handles.stream)));
    EXPECT_TRUE(rejects(
        api_->stream_wait_event(context, handles.stream, handles.event)));
    int32_t priority = 0;
    EXPECT_TRUE(
        rejects(api_->stream_get_priority(context, handles.stream, &priority)));
    openreg_event event = nullptr;
    EXPECT_TRUE(rejects(api_->event_create(context, 0, 0, &event)));
    EXPECT_TRUE(
        rejects(api_->event_record(context, handles.event, handles.stream)));
    EXPECT_TRUE(rejects(api_->event_query(context, handles.event)));
    EXPECT_TRUE(rejects(api_->event_synchronize(context, handles.event)));
    float ms = 0;
    EXPECT_TRUE(rejects(
        api_->event_elapsed_time(context, handles.event, handles.event, &ms)));
    EXPECT_TRUE(rejects(
        api_->launch_host_func(context, handles.stream, Succeed, nullptr)));
    EXPECT_TRUE(rejects(api_->device_synchronize(context, 0)));
    EXPECT_TRUE(rejects(api_->event_destroy(context, handles.event)));
    EXPECT_TRUE(rejects(api_->stream_destroy(context, handles.stream)));
    EXPECT_TRUE(rejects(api_->context_destroy(context)));
  }

  // The driver's defaults, read from a context made with a null config.
  struct Defaults {
    int32_t device_count = 0;
    uint64_t device_memory_bytes = 0;
  };
  Defaults ReadDefaults() {
    Defaults defaults;
    openreg_context context = NewContext(nullptr);
    if (context == nullptr) return defaults;
    EXPECT_EQ(api_->get_device_count(context, &defaults.device_count),
              OPENREG_SUCCESS);
    uint64_t free_bytes = 0;
    EXPECT_EQ(api_->mem_get_info(context, 0, &free_bytes,
                                 &defaults.device_memory_bytes),
              OPENREG_SUCCESS);
    EXPECT_EQ(free_bytes, defaults.device_memory_bytes);
    EXPECT_EQ(DestroyContext(context), OPENREG_SUCCESS);
    return defaults;
  }

  // context_create(config) fails with INVALID_ARGUMENT and a message read
  // with a null context, and the driver still creates a context afterwards.
  void ExpectConfigRejected(const openreg_driver_config* config) {
    openreg_context context = nullptr;
    EXPECT_TRUE(FailsWith(nullptr, OPENREG_ERROR_INVALID_ARGUMENT,
                          CreateContext(config, &context)));
    const openreg_driver_config good = Config(1, kCapacity);
    openreg_context after = NewContext(&good);
    if (after != nullptr) {
      EXPECT_EQ(DestroyContext(after), OPENREG_SUCCESS);
    }
  }
};

OPENREG_CONFORMANCE_SUITE(LifecycleTest, LifecycleFixture);

TEST_P(LifecycleTest, NullContextIsRejectedByEveryFunction) {
  // With handles of a live context: the driver must check the context, not
  // find its way to one through the handles.
  Handles handles;
  ASSERT_NE(NewContextWithHandles(handles), nullptr);
  ExpectEveryFunctionRejects(nullptr, handles);
}

TEST_P(LifecycleTest, DestroyedContextIsRejectedByEveryFunction) {
  Handles handles;
  openreg_context context = NewContextWithHandles(handles);
  ASSERT_NE(context, nullptr);
  ASSERT_EQ(DestroyContext(context), OPENREG_SUCCESS)
      << api_->last_error_message(nullptr);
  ExpectEveryFunctionRejects(context, handles);
}

TEST_P(LifecycleTest, NullConfigGivesUsableDefaults) {
  const Defaults defaults = ReadDefaults();
  EXPECT_GE(defaults.device_count, 1);
  EXPECT_GT(defaults.device_memory_bytes, 0u);
}

TEST_P(LifecycleTest, ZeroFieldsAndEmptyOptionsSelectTheDefaults) {
  const Defaults defaults = ReadDefaults();
  for (const char* options : {static_cast<const char*>(nullptr), "", " , ,"}) {
    openreg_driver_config config = Config(0, 0);
    config.options = options;
    openreg_context context = NewContext(&config);
    ASSERT_NE(context, nullptr);
    int32_t count = 0;
    EXPECT_EQ(api_->get_device_count(context, &count), OPENREG_SUCCESS);
    EXPECT_EQ(count, defaults.device_count);
    uint64_t free_bytes = 0;
    uint64_t total_bytes = 0;
    EXPECT_EQ(api_->mem_get_info(context, 0, &free_bytes, &total_bytes),
              OPENREG_SUCCESS);
    EXPECT_EQ(total_bytes, defaults.device_memory_bytes);
    EXPECT_EQ(DestroyContext(context), OPENREG_SUCCESS);
  }
}

TEST_P(LifecycleTest, UnknownOptionKeyFailsContextCreate) {
  const openreg_driver_config config =
      Config(1, kCapacity, "openreg_conformance_no_such_key=1");
  ExpectConfigRejected(&config);
}

TEST_P(LifecycleTest, BadConfigFieldsFailContextCreate) {
  const openreg_driver_config negative = Config(-1, 0);
  ExpectConfigRejected(&negative);
  openreg_driver_config truncated = Config(1, 0);
  truncated.struct_size = sizeof(size_t);
  ExpectConfigRejected(&truncated);
}

TEST_P(LifecycleTest, NullOutPointerFailsContextCreate) {
  const openreg_driver_config config = Config(1, kCapacity);
  EXPECT_TRUE(FailsWith(nullptr, OPENREG_ERROR_INVALID_ARGUMENT,
                        CreateContext(&config, nullptr)));
}

TEST_P(LifecycleTest, ConfigStructSizeLimitsWhatIsRead) {
  const Defaults defaults = ReadDefaults();
  // A writer that knew only device_count: the other fields hold garbage the
  // driver must not read.
  openreg_driver_config config =
      Config(4, 12345, "openreg_conformance_garbage=1");
  config.struct_size = OPENREG_STRUCT_SIZE(openreg_driver_config, device_count);
  openreg_context context = NewContext(&config);
  ASSERT_NE(context, nullptr);
  int32_t count = 0;
  EXPECT_EQ(api_->get_device_count(context, &count), OPENREG_SUCCESS);
  EXPECT_EQ(count, 4);
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_EQ(api_->mem_get_info(context, 0, &free_bytes, &total_bytes),
            OPENREG_SUCCESS);
  EXPECT_EQ(total_bytes, defaults.device_memory_bytes);
}

TEST_P(LifecycleTest, DestroyReleasesEverythingAndAllowsANewContext) {
  Handles handles;
  openreg_context old_context = NewContextWithHandles(handles);
  ASSERT_NE(old_context, nullptr);
  void* half_memory = nullptr;
  ASSERT_EQ(api_->device_malloc(old_context, 0, kCapacity / 2, &half_memory),
            OPENREG_SUCCESS)
      << api_->last_error_message(old_context);
  ASSERT_EQ(DestroyContext(old_context), OPENREG_SUCCESS)
      << api_->last_error_message(nullptr);

  const openreg_driver_config config = Config(1, kCapacity);
  openreg_context context = NewContext(&config);
  ASSERT_NE(context, nullptr);
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_EQ(api_->mem_get_info(context, 0, &free_bytes, &total_bytes),
            OPENREG_SUCCESS);
  EXPECT_EQ(free_bytes, kCapacity);
  // Handles of the destroyed context are dead in the new one, not aliases of
  // its handles.
  EXPECT_TRUE(FailsWith(context, OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_query(context, handles.stream)));
  EXPECT_TRUE(FailsWith(context, OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_query(context, handles.event)));
  EXPECT_TRUE(FailsWith(context, OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(context, 0, handles.device_ptr)));
  EXPECT_TRUE(FailsWith(context, OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->host_free(context, handles.host_ptr)));
}

TEST_P(LifecycleTest, DestroyDropsQueuedWorkWithoutRunningIt) {
  const openreg_driver_config config = Config(1, kCapacity);
  openreg_context context = NewContext(&config);
  ASSERT_NE(context, nullptr);
  openreg_stream stream = nullptr;
  ASSERT_EQ(api_->stream_create(context, 0, 0, &stream), OPENREG_SUCCESS);
  Gate gate;
  ASSERT_EQ(gate.Launch(api_, context, stream), OPENREG_SUCCESS);
  ASSERT_TRUE(gate.AwaitStarted());
  std::atomic<int> ran{0};
  constexpr int kQueued = 20;
  for (int i = 0; i < kQueued; ++i) {
    ASSERT_EQ(api_->launch_host_func(context, stream, Count, &ran),
              OPENREG_SUCCESS);
  }
  // context_destroy waits for the running item, so the gate opens a while
  // after destruction began.
  std::thread opener([&gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    gate.Open();
  });
  const bool gate_done_before_destroy = gate.finished();
  EXPECT_EQ(DestroyContext(context), OPENREG_SUCCESS)
      << api_->last_error_message(nullptr);
  opener.join();
  EXPECT_TRUE(gate.finished());
  if (gate.ran_inline()) {
    // A synchronous driver ran everything at launch.
    EXPECT_EQ(ran.load(), kQueued);
  } else if (!gate_done_before_destroy) {
    // The gate was still running when destruction came: what followed it
    // was still queued, and is dropped.
    EXPECT_EQ(ran.load(), 0);
  }
}

}  // namespace
}  // namespace openreg::conformance
