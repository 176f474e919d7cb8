// What only cpu_sim promises, through its raw C function table, loaded with
// dlopen exactly as the core loads a driver: its identity and defaults, its
// error messages, and that all work is done by the time the call that
// enqueued it returns. The ABI itself is covered by the conformance suite in
// tests/conformance, which runs against every driver. Each test runs on its
// own context: under CpuSimTest, which creates one and destroys it again, or
// under CpuSimLifecycleTest, which manages contexts itself.
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "driver_abi/openreg_driver.h"
#include "gtest/gtest.h"

namespace {

// Relative to the runfiles root, which is the working directory of a Bazel
// test. OPENREG_TEST_DRIVER_PATH overrides it for runs outside Bazel.
constexpr char kRunfilesDriverPath[] = "plugins/cpu_sim/libopenreg_cpu_sim.so";

constexpr int32_t kDeviceCount = 3;
constexpr uint64_t kCapacity = uint64_t{1} << 20;

struct LoadedDriver {
  openreg_driver_get_api_fn entry = nullptr;
  const openreg_driver_api* api = nullptr;
  std::string error;
};

// Loads the library once for the whole process and never unloads it, so
// thread_local state in the driver outlives every test thread.
const LoadedDriver& Driver() {
  static const LoadedDriver* driver = [] {
    auto* loaded = new LoadedDriver;
    const char* override_path = std::getenv("OPENREG_TEST_DRIVER_PATH");
    const char* path = override_path != nullptr && override_path[0] != '\0'
                           ? override_path
                           : kRunfilesDriverPath;
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      loaded->error = std::string("dlopen failed: ") + dlerror();
      return loaded;
    }
    loaded->entry = reinterpret_cast<openreg_driver_get_api_fn>(
        dlsym(handle, OPENREG_DRIVER_ENTRY_SYMBOL_NAME));
    if (loaded->entry == nullptr) {
      loaded->error = std::string("dlsym failed: ") + dlerror();
      return loaded;
    }
    const openreg_status status =
        loaded->entry(OPENREG_DRIVER_ABI_VERSION_MAJOR,
                      OPENREG_DRIVER_ABI_VERSION_MINOR, &loaded->api);
    if (status != OPENREG_SUCCESS) {
      loaded->error = "entry point returned status " + std::to_string(status);
      loaded->api = nullptr;
    }
    return loaded;
  }();
  return *driver;
}

const openreg_driver_api* Api() { return Driver().api; }

// Where the test, on the host, reaches the bytes of device address `ptr` of
// `device`: the driver's execution view (device addresses fault).
template <typename T>
T* ExecutionView(openreg_context context, int32_t device, T* ptr) {
  intptr_t offset = 0;
  EXPECT_EQ(Api()->device_execution_offset(context, device, &offset),
            OPENREG_SUCCESS);
  return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(ptr) + offset);
}

openreg_driver_config Config(int32_t device_count, uint64_t memory_bytes,
                             const char* options) {
  openreg_driver_config config;
  config.struct_size = OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0;
  config.device_count = device_count;
  config.device_memory_bytes = memory_bytes;
  config.options = options;
  return config;
}

// Tests that create and destroy contexts themselves.
class CpuSimLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(Api(), nullptr) << Driver().error;
    api_ = Api();
  }

  // Checks that `actual` is `expected` and that the driver's last error
  // message on this thread, for `context` (the context the call used, or NULL
  // after a failed context_create), mentions every fragment.
  ::testing::AssertionResult FailsWith(
      openreg_status expected, openreg_status actual,
      std::initializer_list<const char*> fragments,
      openreg_context context = nullptr) {
    const std::string message = api_->last_error_message(context);
    if (actual != expected) {
      return ::testing::AssertionFailure()
             << "expected status " << expected << ", got " << actual
             << " (last error: \"" << message << "\")";
    }
    if (message.empty()) {
      return ::testing::AssertionFailure() << "last_error_message is empty";
    }
    for (const char* fragment : fragments) {
      if (message.find(fragment) == std::string::npos) {
        return ::testing::AssertionFailure()
               << "last error \"" << message << "\" does not mention \""
               << fragment << "\"";
      }
    }
    return ::testing::AssertionSuccess();
  }

  // A new context configured by `config`; fails the test if there is none.
  openreg_context NewContext(const openreg_driver_config* config) {
    openreg_context context = nullptr;
    EXPECT_EQ(api_->context_create(config, &context), OPENREG_SUCCESS)
        << api_->last_error_message(nullptr);
    return context;
  }

  const openreg_driver_api* api_ = nullptr;
};

// Tests that run against a context of kDeviceCount devices of kCapacity
// bytes each.
class CpuSimTest : public CpuSimLifecycleTest {
 protected:
  void SetUp() override {
    CpuSimLifecycleTest::SetUp();
    const openreg_driver_config config = Config(kDeviceCount, kCapacity, "");
    ASSERT_EQ(api_->context_create(&config, &context_), OPENREG_SUCCESS)
        << api_->last_error_message(nullptr);
  }

  void TearDown() override {
    if (context_ != nullptr) {
      EXPECT_EQ(api_->context_destroy(context_), OPENREG_SUCCESS)
          << api_->last_error_message(context_);
    }
  }

  // FailsWith for a call on this test's context.
  ::testing::AssertionResult FailsWith(
      openreg_status expected, openreg_status actual,
      std::initializer_list<const char*> fragments) {
    return CpuSimLifecycleTest::FailsWith(expected, actual, fragments,
                                          context_);
  }

  openreg_stream NewStream(int32_t device) {
    openreg_stream stream = nullptr;
    EXPECT_EQ(api_->stream_create(context_, device, 0, &stream),
              OPENREG_SUCCESS)
        << api_->last_error_message(context_);
    return stream;
  }

  openreg_event NewEvent(int32_t device, uint32_t flags) {
    openreg_event event = nullptr;
    EXPECT_EQ(api_->event_create(context_, device, flags, &event),
              OPENREG_SUCCESS)
        << api_->last_error_message(context_);
    return event;
  }

  void* DeviceAlloc(int32_t device, size_t size) {
    void* ptr = nullptr;
    EXPECT_EQ(api_->device_malloc(context_, device, size, &ptr),
              OPENREG_SUCCESS)
        << api_->last_error_message(context_);
    return ptr;
  }

  openreg_context context_ = nullptr;
};

// --- Identity and defaults ---------------------------------------------------

TEST_F(CpuSimLifecycleTest, IdentityAndDefaults) {
  EXPECT_STREQ(api_->driver_name, "cpu_sim");
  EXPECT_STREQ(api_->driver_version, "2.0.0");
  // ABI 2.2 exactly.
  EXPECT_EQ(api_->abi_version_major, 2u);
  EXPECT_EQ(api_->abi_version_minor, 2u);
  EXPECT_EQ(api_->struct_size, OPENREG_DRIVER_API_STRUCT_SIZE_V2_2);
  openreg_context context = NewContext(nullptr);
  ASSERT_NE(context, nullptr);
  int32_t count = 0;
  EXPECT_EQ(api_->get_device_count(context, &count), OPENREG_SUCCESS);
  EXPECT_EQ(count, 2);
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_EQ(api_->mem_get_info(context, 1, &free_bytes, &total_bytes),
            OPENREG_SUCCESS);
  EXPECT_EQ(total_bytes, uint64_t{16} << 30);
  EXPECT_EQ(api_->context_destroy(context), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, DeviceProperties) {
  for (int32_t device = 0; device < kDeviceCount; ++device) {
    openreg_device_properties props{};
    props.struct_size = OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0;
    ASSERT_EQ(api_->get_device_properties(context_, device, &props),
              OPENREG_SUCCESS)
        << api_->last_error_message(context_);
    EXPECT_STREQ(props.name, "openreg cpu_sim device");
    EXPECT_EQ(props.total_memory_bytes, kCapacity);
    EXPECT_EQ(props.least_stream_priority, 0);
    EXPECT_EQ(props.greatest_stream_priority, -1);
    // Work runs on the calling thread, one item at a time.
    EXPECT_EQ(props.concurrent_streams, 1);
  }
}

TEST_F(CpuSimLifecycleTest, AcceptsNoOptions) {
  openreg_context context = nullptr;
  const openreg_driver_config config =
      Config(1, kCapacity, "threads=4,verbose=1");
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->context_create(&config, &context),
                        {"\"threads\"", "accepts no options"}));
  const openreg_driver_config keyless = Config(1, kCapacity, "=4");
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->context_create(&keyless, &context),
                        {"no key", "accepts no options"}));
  EXPECT_EQ(context, nullptr);
}

// The option both simulated drivers share (sim::ParseConfig) reaches cpu_sim.
TEST_F(CpuSimLifecycleTest, AcceptsRetainFreedMemory) {
  openreg_context context = nullptr;
  const openreg_driver_config bad =
      Config(1, kCapacity, "retain_freed_memory=-1");
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->context_create(&bad, &context),
                        {"retain_freed_memory=\"-1\"", "KiB, MiB or GiB"}));
  EXPECT_EQ(context, nullptr);
  const openreg_driver_config good =
      Config(1, kCapacity, "retain_freed_memory=0");
  ASSERT_EQ(api_->context_create(&good, &context), OPENREG_SUCCESS);
  EXPECT_EQ(api_->context_destroy(context), OPENREG_SUCCESS);
}

// --- Messages ----------------------------------------------------------------
// The conformance suite checks the statuses; these check that cpu_sim's
// messages say what was expected and what was found.

TEST_F(CpuSimLifecycleTest, ContextMessages) {
  int32_t count = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->get_device_count(nullptr, &count),
                        {"cpu_sim: get_device_count", "context is NULL",
                         "context_create"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->context_destroy(nullptr),
                        {"context_destroy", "context is NULL"}));
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      Driver().entry(OPENREG_DRIVER_ABI_VERSION_MAJOR, 0, nullptr),
      {"'api' is NULL"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->context_create(nullptr, nullptr),
                        {"context_create", "'context' is NULL"}));
  openreg_context context = nullptr;
  const openreg_driver_config negative = Config(-1, 0, nullptr);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->context_create(&negative, &context),
                        {"device_count -1", "1 to 1024"}));
  openreg_driver_config truncated = Config(1, 0, nullptr);
  truncated.struct_size = sizeof(size_t);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->context_create(&truncated, &context),
                        {"struct_size", "OPENREG_DRIVER_CONFIG_STRUCT_SIZE"}));
}

TEST_F(CpuSimLifecycleTest, DestroyedContextIsRejected) {
  const openreg_driver_config config = Config(1, kCapacity, nullptr);
  openreg_context context = NewContext(&config);
  openreg_stream stream = nullptr;
  ASSERT_EQ(api_->stream_create(context, 0, 0, &stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->context_destroy(context), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_query(context, stream),
                        {"stream_query", "not a live context",
                         "destroyed by context_destroy"},
                        context));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->context_destroy(context),
                        {"context_destroy", "not a live context"}, context));
  // A made-up context is no better.
  int32_t count = 0;
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->get_device_count(reinterpret_cast<openreg_context>(&count),
                             &count),
      {"not a live context"}));
}

// Contexts share nothing: each has its own devices, memory capacity and
// handles, and destroying one leaves the other working.
TEST_F(CpuSimLifecycleTest, TwoContextsCoexistIndependently) {
  const openreg_driver_config small = Config(1, 1024, nullptr);
  const openreg_driver_config large = Config(3, kCapacity, nullptr);
  openreg_context a = NewContext(&small);
  openreg_context b = NewContext(&large);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(a, b);
  int32_t count_a = 0;
  int32_t count_b = 0;
  ASSERT_EQ(api_->get_device_count(a, &count_a), OPENREG_SUCCESS);
  ASSERT_EQ(api_->get_device_count(b, &count_b), OPENREG_SUCCESS);
  EXPECT_EQ(count_a, 1);
  EXPECT_EQ(count_b, 3);
  // Independent capacity: filling a's device leaves b's untouched.
  void* in_a = nullptr;
  ASSERT_EQ(api_->device_malloc(a, 0, 1024, &in_a), OPENREG_SUCCESS);
  void* more = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_OUT_OF_MEMORY,
                        api_->device_malloc(a, 0, 1, &more),
                        {"device 0 out of memory"}, a));
  void* in_b = nullptr;
  ASSERT_EQ(api_->device_malloc(b, 0, 4096, &in_b), OPENREG_SUCCESS);
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  ASSERT_EQ(api_->mem_get_info(b, 0, &free_bytes, &total_bytes),
            OPENREG_SUCCESS);
  EXPECT_EQ(free_bytes, kCapacity - 4096);
  // Pointers of one context are not the other's.
  openreg_pointer_attributes attributes{};
  attributes.struct_size = sizeof(attributes);
  ASSERT_EQ(api_->pointer_get_attributes(b, in_a, &attributes),
            OPENREG_SUCCESS);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_UNREGISTERED);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(b, 0, in_a),
                        {"not a live allocation of device 0"}, b));
  // Handles of one context are rejected by the other.
  openreg_stream stream_a = nullptr;
  openreg_event event_a = nullptr;
  openreg_stream stream_b = nullptr;
  ASSERT_EQ(api_->stream_create(a, 0, 0, &stream_a), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_create(a, 0, OPENREG_EVENT_DEFAULT, &event_a),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_create(b, 0, 0, &stream_b), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_query(b, stream_a),
                        {"not a live stream of this context",
                         "belongs to another context"},
                        b));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_record(b, event_a, stream_b),
                        {"not a live event of this context"}, b));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->memset_async(b, in_a, 0, 16, stream_b),
                        {"not inside any live device allocation"}, b));
  // Destroying one leaves the other working.
  ASSERT_EQ(api_->context_destroy(a), OPENREG_SUCCESS);
  ASSERT_EQ(api_->memset_async(b, in_b, 0x3c, 4096, stream_b),
            OPENREG_SUCCESS);
  EXPECT_EQ(ExecutionView(b, 0, static_cast<unsigned char*>(in_b))[4095], 0x3c);
  EXPECT_EQ(api_->stream_destroy(b, stream_b), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(b, 0, in_b), OPENREG_SUCCESS);
  EXPECT_EQ(api_->context_destroy(b), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, DeviceAndStructMessages) {
  void* ptr = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                        api_->device_malloc(context_, kDeviceCount, 16, &ptr),
                        {"device_malloc", "device 3", "0 to 2"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                        api_->device_synchronize(context_, -1),
                        {"device_synchronize", "device -1", "0 to 2"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->get_device_count(context_, nullptr),
                        {"'count' is NULL"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_create(context_, 0, 0, nullptr),
                        {"stream_create", "'stream' is NULL"}));
  openreg_device_properties tiny{};
  tiny.struct_size = offsetof(openreg_device_properties, name) + 4;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->get_device_properties(context_, 0, &tiny),
                        {"struct_size is 12",
                         "OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0"}));
  openreg_pointer_attributes attributes{};
  attributes.struct_size = sizeof(size_t);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->pointer_get_attributes(context_, this,
                                                     &attributes),
                        {"struct_size is 8",
                         "OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0"}));
  openreg_stream stream = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_create(context_, 2, -2, &stream),
                        {"priority -2", "[-1, 0]", "device 2"}));
}

TEST_F(CpuSimTest, MemoryMessages) {
  void* too_big = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_OUT_OF_MEMORY,
                        api_->device_malloc(context_, 0, kCapacity + 1,
                                            &too_big),
                        {"device 0 out of memory", "requested 1048577 bytes",
                         "0 of 1048576 bytes in use"}));
  int on_stack = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(context_, 0, &on_stack),
                        {"device_free", "not a live allocation of device 0"}));
  char* ptr = static_cast<char*>(DeviceAlloc(0, 512));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(context_, 0, ptr + 16),
                        {"16 bytes into the allocation", "base pointer"}));
  EXPECT_EQ(api_->device_free(context_, 0, ptr), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(context_, 0, ptr),
                        {"already freed"}));
  void* host = nullptr;
  ASSERT_EQ(api_->host_malloc(context_, 100, &host), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->host_free(context_, static_cast<char*>(host) + 8),
                        {"host_free", "8 bytes into", "base pointer"}));
  EXPECT_EQ(api_->host_free(context_, host), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->host_free(context_, host),
                        {"not a live pinned host allocation"}));
}

TEST_F(CpuSimTest, CopyMessages) {
  openreg_stream stream = NewStream(0);
  char* device = static_cast<char*>(DeviceAlloc(0, 1024));
  std::vector<unsigned char> host(2048, 0x33);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->memcpy_async(context_, device, host.data(), 16,
                                           4, stream),
                        {"kind", "not a copy direction"}));
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(context_, host.data(), host.data() + 1024, 16,
                         OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
      {"dst", "not inside any live device allocation",
       "OPENREG_MEMCPY_HOST_TO_DEVICE"}));
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(context_, host.data(), device + 1000, 100,
                         OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
      {"src range", "runs past the end", "1024 bytes", "device 0",
       "by 76 bytes"}));
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(context_, device, nullptr, 16,
                         OPENREG_MEMCPY_HOST_TO_DEVICE,
                         stream),
      {"'src' is NULL"}));
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(context_, host.data(), host.data() + 1024, 16,
                         OPENREG_MEMCPY_HOST_TO_HOST, nullptr),
      {"memcpy_async", "stream is NULL", "stream_create"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->memset_async(context_, host.data(), 0, 64,
                                           stream),
                        {"memset_async", "ptr", "not inside any live device "
                                                "allocation"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->memset_async(context_, device + 1000, 0, 25,
                                           stream),
                        {"runs past the end", "by 1 bytes"}));
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->memset_async(context_, host.data(), 0, 4, stream),
                        {"memset_async", "not a live stream"}));
}

TEST_F(CpuSimTest, EventMessages) {
  openreg_stream stream = NewStream(1);
  openreg_event timing = NewEvent(1, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event plain = NewEvent(1, OPENREG_EVENT_DEFAULT);
  openreg_event unrecorded = NewEvent(1, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event elsewhere = NewEvent(0, OPENREG_EVENT_DEFAULT);
  ASSERT_EQ(api_->event_record(context_, timing, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(context_, plain, stream), OPENREG_SUCCESS);
  float ms = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_elapsed_time(context_, plain, timing, &ms),
                        {"start event", "OPENREG_EVENT_ENABLE_TIMING"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_elapsed_time(context_, timing, unrecorded,
                                                 &ms),
                        {"end event", "never recorded", "event_record"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_record(context_, elsewhere, stream),
                        {"belongs to device 0", "stream belongs to device 1"}));
  openreg_event unsupported = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_SUPPORTED,
                        api_->event_create(context_, 0, 0x5, &unsupported),
                        {"flags 0x5", "bits 0x4",
                         "OPENREG_EVENT_ENABLE_TIMING"}));
  ASSERT_EQ(api_->event_destroy(context_, unrecorded), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_query(context_, unrecorded),
                        {"event_query", "not a live event"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_query(context_, nullptr),
                        {"event_query", "event is NULL"}));
  for (openreg_event event : {timing, plain, elsewhere}) {
    EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
  }
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

// --- Synchronous execution ---------------------------------------------------

TEST_F(CpuSimTest, WorkIsDoneWhenTheEnqueueingCallReturns) {
  openreg_stream stream = NewStream(0);
  char* device = static_cast<char*>(DeviceAlloc(0, 64));
  void* pinned = nullptr;
  ASSERT_EQ(api_->host_malloc(context_, 64, &pinned), OPENREG_SUCCESS);
  ASSERT_EQ(api_->memset_async(context_, device, 0x5c, 64, stream),
            OPENREG_SUCCESS);
  EXPECT_EQ(ExecutionView(context_, 0, device)[63], 0x5c);
  // Even into pinned memory, which asynchronous drivers copy later.
  ASSERT_EQ(api_->memcpy_async(context_, pinned, device, 64,
                               OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
            OPENREG_SUCCESS);
  EXPECT_EQ(static_cast<char*>(pinned)[0], 0x5c);
  std::thread::id ran_on;
  ASSERT_EQ(api_->launch_host_func(context_, 
                stream,
                [](void* user_data) -> openreg_status {
                  *static_cast<std::thread::id*>(user_data) =
                      std::this_thread::get_id();
                  return OPENREG_SUCCESS;
                },
                &ran_on),
            OPENREG_SUCCESS);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  // Records complete, and take their time, when they are made.
  openreg_event start = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event end = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  ASSERT_EQ(api_->event_record(context_, start, stream), OPENREG_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(api_->event_record(context_, end, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_query(context_, end), OPENREG_SUCCESS);
  float ms = -1;
  ASSERT_EQ(api_->event_elapsed_time(context_, start, end, &ms),
            OPENREG_SUCCESS);
  EXPECT_GE(ms, 19.0f);
  EXPECT_EQ(api_->stream_query(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, start), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(context_, end), OPENREG_SUCCESS);
  EXPECT_EQ(api_->host_free(context_, pinned), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

// Note [Remembered stream lookups] (plugins/cpu_sim/stream.h): each thread
// remembers its last stream lookup. A destroyed stream must still be refused
// at once, by the thread that used it last and by every other thread.
openreg_status LaunchNothing(const openreg_driver_api* api,
                             openreg_context context, openreg_stream stream) {
  return api->launch_host_func(
      context, stream, [](void*) -> openreg_status { return OPENREG_SUCCESS; },
      nullptr);
}

TEST_F(CpuSimTest, StreamDestroyedAfterALaunchIsRefusedByTheLaunchingThread) {
  openreg_stream stream = NewStream(0);
  ASSERT_EQ(LaunchNothing(api_, context_, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        LaunchNothing(api_, context_, stream),
                        {"launch_host_func", "not a live stream"}));
}

TEST_F(CpuSimTest, StreamDestroyedOnAnotherThreadIsRefusedHere) {
  openreg_stream stream = NewStream(0);
  ASSERT_EQ(LaunchNothing(api_, context_, stream), OPENREG_SUCCESS);
  std::thread destroyer([&] {
    EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  });
  destroyer.join();
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->memset_async(context_, DeviceAlloc(0, 16), 0,
                                           16, stream),
                        {"memset_async", "not a live stream"}));
}

TEST_F(CpuSimTest, StreamsCreatedAfterALaunchLeaveTheLaunchedOneWorking) {
  openreg_stream first = NewStream(0);
  ASSERT_EQ(LaunchNothing(api_, context_, first), OPENREG_SUCCESS);
  openreg_stream second = NewStream(1);
  ASSERT_EQ(api_->stream_destroy(context_, second), OPENREG_SUCCESS);
  // The new stream takes the destroyed one's execution mutex.
  openreg_stream third = NewStream(2);
  int32_t priority = -1;
  ASSERT_EQ(api_->stream_get_priority(context_, first, &priority),
            OPENREG_SUCCESS);
  EXPECT_EQ(LaunchNothing(api_, context_, first), OPENREG_SUCCESS);
  EXPECT_EQ(LaunchNothing(api_, context_, third), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        LaunchNothing(api_, context_, second),
                        {"not a live stream"}));
  EXPECT_EQ(api_->stream_destroy(context_, first), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, third), OPENREG_SUCCESS);
}

// A later context, which may even reuse the old one's address, has gone
// through the same creations as the old one: a stream of the old context must
// not be taken for one of the new.
TEST_F(CpuSimLifecycleTest, StreamOfADestroyedContextIsRefusedByALaterOne) {
  const openreg_driver_config config = Config(1, kCapacity, nullptr);
  openreg_stream old_stream = nullptr;
  openreg_context old_context = NewContext(&config);
  ASSERT_EQ(api_->stream_create(old_context, 0, 0, &old_stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(LaunchNothing(api_, old_context, old_stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->context_destroy(old_context), OPENREG_SUCCESS);
  for (int attempt = 0; attempt < 4; ++attempt) {
    openreg_context context = NewContext(&config);
    openreg_stream stream = nullptr;
    ASSERT_EQ(api_->stream_create(context, 0, 0, &stream), OPENREG_SUCCESS);
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                          LaunchNothing(api_, context, old_stream),
                          {"not a live stream"}, context));
    EXPECT_EQ(LaunchNothing(api_, context, stream), OPENREG_SUCCESS);
    ASSERT_EQ(api_->context_destroy(context), OPENREG_SUCCESS);
  }
}

TEST_F(CpuSimTest, FailingHostFunctionIsReportedByTheLaunch) {
  openreg_stream stream = NewStream(0);
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_LAUNCH_FAILURE,
      api_->launch_host_func(context_, 
          stream,
          [](void*) -> openreg_status { return OPENREG_ERROR_INVALID_DEVICE; },
          nullptr),
      {"host function", "returned status 2", "OPENREG_ERROR_INVALID_DEVICE"}));
  // Reported synchronously, so it is not sticky.
  EXPECT_EQ(api_->stream_query(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_synchronize(context_, 0), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

}  // namespace
