// Tests the cpu_sim driver through its raw C function table, loaded with
// dlopen exactly as the core loads a driver. The library's state is
// process-wide, so each test either runs under CpuSimTest (which initializes
// the driver and shuts it down again) or manages init/shutdown itself.
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "core/driver/openreg_driver.h"
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

// Checks that `actual` is `expected` and that the driver's last error message
// on this thread mentions every fragment.
::testing::AssertionResult FailsWith(
    openreg_status expected, openreg_status actual,
    std::initializer_list<const char*> fragments) {
  const std::string message = Api()->last_error_message();
  if (actual != expected) {
    return ::testing::AssertionFailure()
           << "expected status " << expected << ", got " << actual
           << " (last error: \"" << message << "\")";
  }
  if (message.empty()) {
    return ::testing::AssertionFailure() << "last_error_message() is empty";
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

openreg_driver_config Config(int32_t device_count, uint64_t memory_bytes,
                             const char* options) {
  openreg_driver_config config;
  config.struct_size = OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0;
  config.device_count = device_count;
  config.device_memory_bytes = memory_bytes;
  config.options = options;
  return config;
}

bool IsAligned(const void* ptr, uintptr_t alignment) {
  return reinterpret_cast<uintptr_t>(ptr) % alignment == 0;
}

// Tests that drive init and shutdown themselves.
class CpuSimLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(Api(), nullptr) << Driver().error;
    api_ = Api();
  }

  const openreg_driver_api* api_ = nullptr;
};

// Tests that run against a driver initialized with kDeviceCount devices of
// kCapacity bytes each.
class CpuSimTest : public CpuSimLifecycleTest {
 protected:
  void SetUp() override {
    CpuSimLifecycleTest::SetUp();
    const openreg_driver_config config = Config(kDeviceCount, kCapacity, "");
    ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS)
        << api_->last_error_message();
    initialized_ = true;
  }

  void TearDown() override {
    if (initialized_) {
      EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS)
          << api_->last_error_message();
    }
  }

  openreg_stream NewStream(int32_t device) {
    openreg_stream stream = nullptr;
    EXPECT_EQ(api_->stream_create(device, 0, &stream), OPENREG_SUCCESS)
        << api_->last_error_message();
    return stream;
  }

  openreg_event NewEvent(int32_t device, uint32_t flags) {
    openreg_event event = nullptr;
    EXPECT_EQ(api_->event_create(device, flags, &event), OPENREG_SUCCESS)
        << api_->last_error_message();
    return event;
  }

  void* DeviceAlloc(int32_t device, size_t size) {
    void* ptr = nullptr;
    EXPECT_EQ(api_->device_malloc(device, size, &ptr), OPENREG_SUCCESS)
        << api_->last_error_message();
    return ptr;
  }

  uint64_t FreeBytes(int32_t device) {
    uint64_t free_bytes = 0;
    uint64_t total_bytes = 0;
    EXPECT_EQ(api_->mem_get_info(device, &free_bytes, &total_bytes),
              OPENREG_SUCCESS)
        << api_->last_error_message();
    EXPECT_EQ(total_bytes, kCapacity);
    return free_bytes;
  }

  bool initialized_ = false;
};

// --- Entry point -------------------------------------------------------------

TEST_F(CpuSimLifecycleTest, EntryPointReturnsCompleteV1Table) {
  EXPECT_EQ(api_->struct_size, OPENREG_DRIVER_API_STRUCT_SIZE_V1_0);
  EXPECT_EQ(api_->abi_version_major,
            static_cast<uint32_t>(OPENREG_DRIVER_ABI_VERSION_MAJOR));
  EXPECT_EQ(api_->abi_version_minor, 0u);
  EXPECT_STREQ(api_->driver_name, "cpu_sim");
  ASSERT_NE(api_->driver_version, nullptr);
  EXPECT_STRNE(api_->driver_version, "");
  // Every slot after the strings is a function pointer.
  const size_t first = offsetof(openreg_driver_api, init);
  const size_t end = OPENREG_DRIVER_API_STRUCT_SIZE_V1_0;
  for (size_t offset = first; offset < end; offset += sizeof(void (*)())) {
    void (*slot)();
    std::memcpy(&slot, reinterpret_cast<const char*>(api_) + offset,
                sizeof(slot));
    EXPECT_NE(slot, nullptr) << "function slot at offset " << offset;
  }
}

TEST_F(CpuSimLifecycleTest, EntryPointChecksVersionAndArguments) {
  const openreg_driver_get_api_fn entry = Driver().entry;
  const openreg_driver_api* table = nullptr;
  // The table comes back whatever the core's version: compatibility is the
  // core's decision, made from the table's own version fields.
  EXPECT_EQ(entry(OPENREG_DRIVER_ABI_VERSION_MAJOR + 1, 0, &table),
            OPENREG_SUCCESS);
  EXPECT_EQ(table, api_);
  EXPECT_EQ(table->abi_version_major, OPENREG_DRIVER_ABI_VERSION_MAJOR);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        entry(OPENREG_DRIVER_ABI_VERSION_MAJOR, 0, nullptr),
                        {"'api' is NULL"}));
  // A core with a newer minor version still gets the v1.0 table.
  EXPECT_EQ(entry(OPENREG_DRIVER_ABI_VERSION_MAJOR, 7, &table),
            OPENREG_SUCCESS);
  EXPECT_EQ(table, api_);
}

// --- Lifecycle ---------------------------------------------------------------

TEST_F(CpuSimLifecycleTest, CallsBeforeInitAreNotInitialized) {
  EXPECT_NE(api_->last_error_message(), nullptr);
  int32_t count = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->get_device_count(&count),
                        {"get_device_count", "call init first"}));
  openreg_device_properties props{};
  props.struct_size = sizeof(props);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->get_device_properties(0, &props),
                        {"get_device_properties"}));
  void* ptr = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->device_malloc(0, 16, &ptr), {"device_malloc"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->device_free(0, nullptr), {"device_free"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->host_malloc(16, &ptr), {"host_malloc"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->host_free(nullptr), {"host_free"}));
  openreg_pointer_attributes attributes{};
  attributes.struct_size = sizeof(attributes);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->pointer_get_attributes(&count, &attributes),
                        {"pointer_get_attributes"}));
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->mem_get_info(0, &free_bytes, &total_bytes),
                        {"mem_get_info"}));
  char buffer[4] = {};
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_NOT_INITIALIZED,
      api_->memcpy_async(buffer, buffer + 2, 2, OPENREG_MEMCPY_HOST_TO_HOST,
                         nullptr),
      {"memcpy_async"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->memset_async(buffer, 0, 4, nullptr),
                        {"memset_async"}));
  openreg_stream stream = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->stream_create(0, 0, &stream), {"stream_create"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->stream_destroy(stream), {"stream_destroy"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->stream_query(stream), {"stream_query"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->stream_synchronize(stream),
                        {"stream_synchronize"}));
  openreg_event event = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->stream_wait_event(stream, event),
                        {"stream_wait_event"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_create(0, 0, &event), {"event_create"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_destroy(event), {"event_destroy"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_record(event, stream), {"event_record"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_query(event), {"event_query"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_synchronize(event), {"event_synchronize"}));
  float ms = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->event_elapsed_time(event, event, &ms),
                        {"event_elapsed_time"}));
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_NOT_INITIALIZED,
      api_->launch_host_func(
          stream, [](void*) -> openreg_status { return OPENREG_SUCCESS; },
          nullptr),
      {"launch_host_func"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED,
                        api_->device_synchronize(0), {"device_synchronize"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_INITIALIZED, api_->shutdown(),
                        {"shutdown"}));
}

TEST_F(CpuSimLifecycleTest, NullConfigUsesDefaults) {
  ASSERT_EQ(api_->init(nullptr), OPENREG_SUCCESS)
      << api_->last_error_message();
  int32_t count = 0;
  EXPECT_EQ(api_->get_device_count(&count), OPENREG_SUCCESS);
  EXPECT_EQ(count, 2);
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_EQ(api_->mem_get_info(1, &free_bytes, &total_bytes), OPENREG_SUCCESS);
  EXPECT_EQ(total_bytes, uint64_t{16} << 30);
  EXPECT_EQ(free_bytes, total_bytes);
  EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS);
}

TEST_F(CpuSimLifecycleTest, ZeroFieldsAndEmptyOptionsUseDefaults) {
  for (const char* options : {static_cast<const char*>(nullptr), "", " , ,"}) {
    const openreg_driver_config config = Config(0, 0, options);
    ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS)
        << api_->last_error_message();
    int32_t count = 0;
    EXPECT_EQ(api_->get_device_count(&count), OPENREG_SUCCESS);
    EXPECT_EQ(count, 2);
    EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS);
  }
}

TEST_F(CpuSimLifecycleTest, RejectsUnknownOptionAndStaysUninitialized) {
  const openreg_driver_config config =
      Config(1, kCapacity, "threads=4,verbose=1");
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->init(&config),
                        {"\"threads\"", "accepts no options"}));
  const openreg_driver_config keyless = Config(1, kCapacity, "=4");
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->init(&keyless),
                        {"no key", "accepts no options"}));
  int32_t count = 0;
  EXPECT_EQ(api_->get_device_count(&count), OPENREG_ERROR_NOT_INITIALIZED);
}

TEST_F(CpuSimLifecycleTest, RejectsBadConfigFields) {
  const openreg_driver_config negative = Config(-1, 0, nullptr);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->init(&negative),
                        {"device_count -1", "1 to"}));
  openreg_driver_config truncated = Config(1, 0, nullptr);
  truncated.struct_size = sizeof(size_t);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->init(&truncated),
                        {"struct_size", "OPENREG_DRIVER_CONFIG_STRUCT_SIZE"}));
  int32_t count = 0;
  EXPECT_EQ(api_->get_device_count(&count), OPENREG_ERROR_NOT_INITIALIZED);
}

TEST_F(CpuSimLifecycleTest, ConfigStructSizeLimitsWhatIsRead) {
  // A writer that knew only device_count: the other fields hold garbage the
  // driver must not read.
  openreg_driver_config config = Config(4, 12345, "garbage=1");
  config.struct_size = OPENREG_STRUCT_SIZE(openreg_driver_config, device_count);
  ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS)
      << api_->last_error_message();
  int32_t count = 0;
  EXPECT_EQ(api_->get_device_count(&count), OPENREG_SUCCESS);
  EXPECT_EQ(count, 4);
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_EQ(api_->mem_get_info(0, &free_bytes, &total_bytes), OPENREG_SUCCESS);
  EXPECT_EQ(total_bytes, uint64_t{16} << 30);
  EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS);
}

TEST_F(CpuSimLifecycleTest, SecondInitWithoutShutdownFails) {
  const openreg_driver_config config = Config(1, kCapacity, nullptr);
  ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->init(&config),
                        {"already initialized", "shutdown"}));
  EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS);
}

TEST_F(CpuSimLifecycleTest, ShutdownReleasesEverythingAndAllowsReinit) {
  const openreg_driver_config config = Config(1, kCapacity, nullptr);
  ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS);
  void* device_ptr = nullptr;
  void* host_ptr = nullptr;
  openreg_stream stream = nullptr;
  openreg_event event = nullptr;
  ASSERT_EQ(api_->device_malloc(0, kCapacity, &device_ptr), OPENREG_SUCCESS);
  ASSERT_EQ(api_->host_malloc(64, &host_ptr), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_create(0, 0, &stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_create(0, 0, &event), OPENREG_SUCCESS);
  ASSERT_EQ(api_->shutdown(), OPENREG_SUCCESS);

  ASSERT_EQ(api_->init(&config), OPENREG_SUCCESS);
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  EXPECT_EQ(api_->mem_get_info(0, &free_bytes, &total_bytes), OPENREG_SUCCESS);
  EXPECT_EQ(free_bytes, kCapacity);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_query(stream),
                        {"not a live stream", "last shutdown"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_query(event), {"not a live event"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(0, device_ptr),
                        {"not a live allocation"}));
  EXPECT_EQ(api_->shutdown(), OPENREG_SUCCESS);
}

// --- Devices -----------------------------------------------------------------

TEST_F(CpuSimTest, DeviceCountAndProperties) {
  int32_t count = 0;
  ASSERT_EQ(api_->get_device_count(&count), OPENREG_SUCCESS);
  EXPECT_EQ(count, kDeviceCount);
  for (int32_t device = 0; device < kDeviceCount; ++device) {
    openreg_device_properties props;
    std::memset(&props, 0x5a, sizeof(props));
    props.struct_size = OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0;
    ASSERT_EQ(api_->get_device_properties(device, &props), OPENREG_SUCCESS)
        << api_->last_error_message();
    EXPECT_STREQ(props.name, "openreg cpu_sim device");
    EXPECT_EQ(props.total_memory_bytes, kCapacity);
    EXPECT_EQ(props.least_stream_priority, 0);
    EXPECT_EQ(props.greatest_stream_priority, -1);
    EXPECT_EQ(props.concurrent_streams, 1);
  }
}

TEST_F(CpuSimTest, DevicePropertiesHonourStructSize) {
  // An older, shorter writer: fields past total_memory_bytes stay untouched.
  openreg_device_properties props;
  std::memset(&props, 0x5a, sizeof(props));
  int32_t untouched;
  std::memset(&untouched, 0x5a, sizeof(untouched));
  props.struct_size =
      OPENREG_STRUCT_SIZE(openreg_device_properties, total_memory_bytes);
  ASSERT_EQ(api_->get_device_properties(0, &props), OPENREG_SUCCESS);
  EXPECT_STREQ(props.name, "openreg cpu_sim device");
  EXPECT_EQ(props.total_memory_bytes, kCapacity);
  EXPECT_EQ(props.least_stream_priority, untouched);
  EXPECT_EQ(props.greatest_stream_priority, untouched);
  EXPECT_EQ(props.concurrent_streams, untouched);

  // A newer, longer writer: bytes past the v1.0 fields stay untouched.
  struct {
    openreg_device_properties props;
    unsigned char extra[32];
  } longer;
  std::memset(&longer, 0x5a, sizeof(longer));
  longer.props.struct_size = sizeof(longer);
  ASSERT_EQ(api_->get_device_properties(0, &longer.props), OPENREG_SUCCESS);
  EXPECT_EQ(longer.props.concurrent_streams, 1);
  for (unsigned char byte : longer.extra) EXPECT_EQ(byte, 0x5a);

  openreg_device_properties tiny{};
  tiny.struct_size = offsetof(openreg_device_properties, name) + 4;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->get_device_properties(0, &tiny),
                        {"struct_size is 12",
                         "OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0"}));
}

TEST_F(CpuSimTest, InvalidDeviceIndicesNameTheValidRange) {
  openreg_device_properties props{};
  props.struct_size = sizeof(props);
  void* ptr = nullptr;
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  openreg_stream stream = nullptr;
  openreg_event event = nullptr;
  for (int32_t device : {-1, kDeviceCount, 1000}) {
    SCOPED_TRACE(device);
    const std::string bad = "device " + std::to_string(device);
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->get_device_properties(device, &props),
                          {bad.c_str(), "0 to 2"}));
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->device_malloc(device, 16, &ptr),
                          {"device_malloc", bad.c_str(), "0 to 2"}));
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->device_free(device, nullptr),
                          {"device_free", "0 to 2"}));
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->mem_get_info(device, &free_bytes, &total_bytes),
                          {"mem_get_info", "0 to 2"}));
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->stream_create(device, 0, &stream),
                          {"stream_create", "0 to 2"}));
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->event_create(device, 0, &event),
                          {"event_create", "0 to 2"}));
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                          api_->device_synchronize(device),
                          {"device_synchronize", "0 to 2"}));
  }
  EXPECT_EQ(api_->device_synchronize(kDeviceCount - 1), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, NullOutPointersAreInvalidArguments) {
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->get_device_count(nullptr), {"'count' is NULL"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->get_device_properties(0, nullptr),
                        {"'props' is NULL"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_malloc(0, 16, nullptr),
                        {"device_malloc", "'ptr' is NULL"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->host_malloc(16, nullptr),
                        {"host_malloc", "'ptr' is NULL"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->pointer_get_attributes(this, nullptr),
                        {"'attributes' is NULL"}));
  uint64_t bytes = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->mem_get_info(0, nullptr, &bytes),
                        {"'free_bytes' is NULL"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->mem_get_info(0, &bytes, nullptr),
                        {"'total_bytes' is NULL"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_create(0, 0, nullptr),
                        {"stream_create", "'stream' is NULL"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_create(0, 0, nullptr),
                        {"event_create", "'event' is NULL"}));
  openreg_event event = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_elapsed_time(event, event, nullptr),
                        {"'milliseconds' is NULL"}));
  openreg_stream stream = NewStream(0);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->launch_host_func(stream, nullptr, nullptr),
                        {"launch_host_func", "'fn' is NULL"}));
  EXPECT_EQ(api_->event_destroy(event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
}

// --- Device memory -----------------------------------------------------------

TEST_F(CpuSimTest, DeviceMallocIsAlignedDistinctAndUsable) {
  std::vector<void*> blocks;
  for (size_t size : {1, 3, 255, 256, 1000, 4096}) {
    void* ptr = DeviceAlloc(1, size);
    ASSERT_NE(ptr, nullptr);
    EXPECT_TRUE(IsAligned(ptr, 256)) << ptr;
    std::memset(ptr, 0x11, size);
    for (void* other : blocks) EXPECT_NE(ptr, other);
    blocks.push_back(ptr);
  }
  for (void* ptr : blocks) {
    EXPECT_EQ(api_->device_free(1, ptr), OPENREG_SUCCESS);
  }
  EXPECT_EQ(FreeBytes(1), kCapacity);
}

TEST_F(CpuSimTest, ZeroSizeMallocAndNullFreeAreNoOps) {
  void* ptr = this;
  EXPECT_EQ(api_->device_malloc(0, 0, &ptr), OPENREG_SUCCESS);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(api_->device_free(0, nullptr), OPENREG_SUCCESS);
  ptr = this;
  EXPECT_EQ(api_->host_malloc(0, &ptr), OPENREG_SUCCESS);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(api_->host_free(nullptr), OPENREG_SUCCESS);
  EXPECT_EQ(FreeBytes(0), kCapacity);
}

TEST_F(CpuSimTest, CapacityLimitGivesOutOfMemoryUntilMemoryIsFreed) {
  void* too_big = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_OUT_OF_MEMORY,
                        api_->device_malloc(0, kCapacity + 1, &too_big),
                        {"device 0 out of memory", "requested 1048577 bytes",
                         "0 of 1048576 bytes in use"}));
  void* half = DeviceAlloc(0, kCapacity / 2);
  void* rest = DeviceAlloc(0, kCapacity / 2);
  ASSERT_NE(half, nullptr);
  ASSERT_NE(rest, nullptr);
  void* one_more = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_OUT_OF_MEMORY,
                        api_->device_malloc(0, 1, &one_more),
                        {"device 0 out of memory", "requested 1 bytes",
                         "1048576 of 1048576 bytes in use"}));
  // Capacity is per device.
  void* elsewhere = DeviceAlloc(1, 1);
  EXPECT_NE(elsewhere, nullptr);

  EXPECT_EQ(api_->device_free(0, half), OPENREG_SUCCESS);
  void* again = DeviceAlloc(0, kCapacity / 2);
  EXPECT_NE(again, nullptr);
  EXPECT_EQ(api_->device_free(0, again), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(0, rest), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(1, elsewhere), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, MemGetInfoTracksAllocations) {
  EXPECT_EQ(FreeBytes(2), kCapacity);
  void* a = DeviceAlloc(2, 1000);
  EXPECT_EQ(FreeBytes(2), kCapacity - 1000);
  void* b = DeviceAlloc(2, 24);
  EXPECT_EQ(FreeBytes(2), kCapacity - 1024);
  EXPECT_EQ(FreeBytes(1), kCapacity);
  EXPECT_EQ(api_->device_free(2, a), OPENREG_SUCCESS);
  EXPECT_EQ(FreeBytes(2), kCapacity - 24);
  EXPECT_EQ(api_->device_free(2, b), OPENREG_SUCCESS);
  EXPECT_EQ(FreeBytes(2), kCapacity);
}

TEST_F(CpuSimTest, DeviceFreeRejectsPointersItDidNotAllocate) {
  int on_stack = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(0, &on_stack),
                        {"device_free", "not a live allocation of device 0"}));
  char* ptr = static_cast<char*>(DeviceAlloc(0, 512));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(0, ptr + 16),
                        {"16 bytes into the allocation", "base pointer"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(1, ptr),
                        {"not a live allocation of device 1"}));
  EXPECT_EQ(api_->device_free(0, ptr), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(0, ptr), {"already freed"}));
  EXPECT_EQ(FreeBytes(0), kCapacity);
}

// --- Host memory and pointer attributes --------------------------------------

openreg_pointer_attributes Attributes(const void* ptr) {
  openreg_pointer_attributes attributes;
  std::memset(&attributes, 0x5a, sizeof(attributes));
  attributes.struct_size = OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0;
  EXPECT_EQ(Api()->pointer_get_attributes(ptr, &attributes), OPENREG_SUCCESS)
      << Api()->last_error_message();
  return attributes;
}

TEST_F(CpuSimTest, PinnedHostMemoryIsTrackedAsHost) {
  void* host = nullptr;
  ASSERT_EQ(api_->host_malloc(100, &host), OPENREG_SUCCESS);
  ASSERT_NE(host, nullptr);
  EXPECT_TRUE(IsAligned(host, 4096));
  std::memset(host, 0x22, 100);

  openreg_pointer_attributes attributes = Attributes(host);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_HOST);
  EXPECT_EQ(attributes.device, -1);
  EXPECT_EQ(attributes.base, host);
  EXPECT_EQ(attributes.size, 100u);
  attributes = Attributes(static_cast<char*>(host) + 99);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_HOST);
  EXPECT_EQ(attributes.base, host);

  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->host_free(static_cast<char*>(host) + 8),
                        {"host_free", "8 bytes into", "base pointer"}));
  EXPECT_EQ(api_->host_free(host), OPENREG_SUCCESS);
  EXPECT_EQ(Attributes(host).memory_type, OPENREG_MEMORY_TYPE_UNREGISTERED);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT, api_->host_free(host),
                        {"not a live pinned host allocation"}));
}

TEST_F(CpuSimTest, PointerAttributesOfDeviceMemoryIncludingInterior) {
  char* ptr = static_cast<char*>(DeviceAlloc(2, 300));
  openreg_pointer_attributes attributes = Attributes(ptr);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_DEVICE);
  EXPECT_EQ(attributes.device, 2);
  EXPECT_EQ(attributes.base, ptr);
  EXPECT_EQ(attributes.size, 300u);

  attributes = Attributes(ptr + 299);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_DEVICE);
  EXPECT_EQ(attributes.device, 2);
  EXPECT_EQ(attributes.base, ptr);
  EXPECT_EQ(attributes.size, 300u);

  // One past the end is not part of this allocation.
  attributes = Attributes(ptr + 300);
  EXPECT_FALSE(attributes.memory_type == OPENREG_MEMORY_TYPE_DEVICE &&
               attributes.base == ptr);
  EXPECT_EQ(api_->device_free(2, ptr), OPENREG_SUCCESS);
  EXPECT_EQ(Attributes(ptr).memory_type, OPENREG_MEMORY_TYPE_UNREGISTERED);
}

TEST_F(CpuSimTest, PointerAttributesOfUnknownPointers) {
  int on_stack = 0;
  for (const void* ptr : {static_cast<const void*>(&on_stack),
                          static_cast<const void*>(nullptr)}) {
    const openreg_pointer_attributes attributes = Attributes(ptr);
    EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_UNREGISTERED);
    EXPECT_EQ(attributes.device, -1);
    EXPECT_EQ(attributes.base, nullptr);
    EXPECT_EQ(attributes.size, 0u);
  }
}

TEST_F(CpuSimTest, PointerAttributesHonourStructSize) {
  void* ptr = DeviceAlloc(0, 64);
  openreg_pointer_attributes attributes;
  std::memset(&attributes, 0x5a, sizeof(attributes));
  const openreg_pointer_attributes untouched = attributes;
  attributes.struct_size =
      OPENREG_STRUCT_SIZE(openreg_pointer_attributes, device);
  ASSERT_EQ(api_->pointer_get_attributes(ptr, &attributes), OPENREG_SUCCESS);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_DEVICE);
  EXPECT_EQ(attributes.device, 0);
  EXPECT_EQ(attributes.base, untouched.base);
  EXPECT_EQ(attributes.size, untouched.size);

  attributes.struct_size = sizeof(size_t);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->pointer_get_attributes(ptr, &attributes),
                        {"struct_size is 8",
                         "OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0"}));
  EXPECT_EQ(api_->device_free(0, ptr), OPENREG_SUCCESS);
}

// --- Copies and memset -------------------------------------------------------

std::vector<unsigned char> Pattern(size_t size, unsigned char seed) {
  std::vector<unsigned char> bytes(size);
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<unsigned char>(seed + i * 7);
  }
  return bytes;
}

TEST_F(CpuSimTest, CopiesOfEveryKindMoveTheData) {
  constexpr size_t kSize = 3000;
  openreg_stream stream = NewStream(0);
  void* device0 = DeviceAlloc(0, kSize);
  void* device1 = DeviceAlloc(1, kSize);
  void* pinned = nullptr;
  ASSERT_EQ(api_->host_malloc(kSize, &pinned), OPENREG_SUCCESS);
  const std::vector<unsigned char> source = Pattern(kSize, 3);
  std::vector<unsigned char> result(kSize, 0);

  ASSERT_EQ(api_->memcpy_async(pinned, source.data(), kSize,
                               OPENREG_MEMCPY_HOST_TO_HOST, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->memcpy_async(device0, pinned, kSize,
                               OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  // Device pointers may belong to any device, whatever the stream's device.
  ASSERT_EQ(api_->memcpy_async(device1, device0, kSize,
                               OPENREG_MEMCPY_DEVICE_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->memcpy_async(result.data(), device1, kSize,
                               OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(stream), OPENREG_SUCCESS);
  EXPECT_EQ(result, source);

  // Interior pointers and partial ranges, within one allocation.
  ASSERT_EQ(api_->memcpy_async(static_cast<char*>(device0) + 100,
                               static_cast<char*>(device0) + 10, 50,
                               OPENREG_MEMCPY_DEVICE_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->memcpy_async(result.data(), device0, kSize,
                               OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
            OPENREG_SUCCESS);
  EXPECT_EQ(0, std::memcmp(result.data() + 100, source.data() + 10, 50));
  EXPECT_EQ(0, std::memcmp(result.data(), source.data(), 100));

  EXPECT_EQ(api_->host_free(pinned), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(0, device0), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(1, device1), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, ZeroByteCopyAndMemsetNeedNoPointers) {
  openreg_stream stream = NewStream(0);
  EXPECT_EQ(api_->memcpy_async(nullptr, nullptr, 0,
                               OPENREG_MEMCPY_DEVICE_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  EXPECT_EQ(api_->memset_async(nullptr, 0, 0, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, InvalidCopiesAreRejectedWithoutTouchingMemory) {
  openreg_stream stream = NewStream(0);
  char* device = static_cast<char*>(DeviceAlloc(0, 1024));
  std::vector<unsigned char> host(2048, 0x33);

  for (int32_t kind : {-1, 4}) {
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                          api_->memcpy_async(device, host.data(), 16, kind,
                                             stream),
                          {"kind", "not a copy direction"}));
  }
  // Host memory where device memory is required, both directions.
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(host.data(), host.data() + 1024, 16,
                         OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
      {"dst", "not inside any live device allocation",
       "OPENREG_MEMCPY_HOST_TO_DEVICE"}));
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(host.data(), host.data() + 1024, 16,
                         OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
      {"src", "not inside any live device allocation"}));
  // Past the end of the device allocation.
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(host.data(), device + 1000, 100,
                         OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
      {"src range", "runs past the end", "1024 bytes", "device 0",
       "by 76 bytes"}));
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(device, host.data(), 2048,
                         OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
      {"dst range", "runs past the end"}));
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(device, nullptr, 16, OPENREG_MEMCPY_HOST_TO_DEVICE,
                         stream),
      {"'src' is NULL"}));
  // A freed allocation no longer counts as device memory.
  char* freed = static_cast<char*>(DeviceAlloc(0, 64));
  ASSERT_EQ(api_->device_free(0, freed), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(freed, device, 16, OPENREG_MEMCPY_DEVICE_TO_DEVICE,
                         stream),
      {"dst", "not inside any live device allocation"}));
  // None of the rejected copies wrote to the host buffer.
  for (unsigned char byte : host) ASSERT_EQ(byte, 0x33);

  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(host.data(), host.data() + 1024, 16,
                         OPENREG_MEMCPY_HOST_TO_HOST, nullptr),
      {"memcpy_async", "stream is NULL", "stream_create"}));
  EXPECT_EQ(api_->device_free(0, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(host.data(), host.data() + 1024, 16,
                         OPENREG_MEMCPY_HOST_TO_HOST, stream),
      {"memcpy_async", "not a live stream"}));
}

TEST_F(CpuSimTest, MemsetWritesTheLowByteOfValue) {
  openreg_stream stream = NewStream(1);
  char* device = static_cast<char*>(DeviceAlloc(1, 512));
  ASSERT_EQ(api_->memset_async(device, 0, 512, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->memset_async(device + 100, 0x1ab, 300, stream),
            OPENREG_SUCCESS);
  std::vector<unsigned char> result(512, 0xff);
  ASSERT_EQ(api_->memcpy_async(result.data(), device, 512,
                               OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
            OPENREG_SUCCESS);
  for (size_t i = 0; i < result.size(); ++i) {
    const unsigned char expected = (i >= 100 && i < 400) ? 0xab : 0;
    ASSERT_EQ(result[i], expected) << "byte " << i;
  }

  std::vector<unsigned char> host(64, 0x44);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->memset_async(host.data(), 0, 64, stream),
                        {"memset_async", "ptr", "not inside any live device "
                                                "allocation"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->memset_async(device + 500, 0, 13, stream),
                        {"runs past the end", "by 1 bytes"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->memset_async(device, 0, 4, nullptr),
                        {"memset_async", "stream is NULL"}));
  for (unsigned char byte : host) ASSERT_EQ(byte, 0x44);
  EXPECT_EQ(api_->device_free(1, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
}

// --- Streams -----------------------------------------------------------------

TEST_F(CpuSimTest, StreamPrioritiesMustBeInRange) {
  for (int32_t priority : {0, -1}) {
    openreg_stream stream = nullptr;
    ASSERT_EQ(api_->stream_create(2, priority, &stream), OPENREG_SUCCESS)
        << api_->last_error_message();
    EXPECT_NE(stream, nullptr);
    EXPECT_EQ(api_->stream_query(stream), OPENREG_SUCCESS);
    EXPECT_EQ(api_->stream_synchronize(stream), OPENREG_SUCCESS);
    EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
  }
  for (int32_t priority : {1, -2}) {
    openreg_stream stream = nullptr;
    const std::string bad = "priority " + std::to_string(priority);
    EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                          api_->stream_create(2, priority, &stream),
                          {bad.c_str(), "[-1, 0]", "device 2"}));
    EXPECT_EQ(stream, nullptr);
  }
}

TEST_F(CpuSimTest, DestroyedStreamsAreRejected) {
  openreg_stream stream = NewStream(0);
  openreg_stream other = NewStream(0);
  EXPECT_NE(stream, other);
  openreg_event event = NewEvent(0, OPENREG_EVENT_DEFAULT);
  ASSERT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_destroy(stream),
                        {"stream_destroy", "not a live stream"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_query(stream),
                        {"stream_query", "not a live stream"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_synchronize(stream),
                        {"stream_synchronize", "not a live stream"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_wait_event(stream, event),
                        {"stream_wait_event", "not a live stream"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_record(event, stream),
                        {"event_record", "not a live stream"}));
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->launch_host_func(
          stream, [](void*) -> openreg_status { return OPENREG_SUCCESS; },
          nullptr),
      {"launch_host_func", "not a live stream"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_query(nullptr),
                        {"stream_query", "stream is NULL"}));
  // The other stream is unaffected.
  EXPECT_EQ(api_->stream_query(other), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(other), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(event), OPENREG_SUCCESS);
}

// --- Events ------------------------------------------------------------------

TEST_F(CpuSimTest, EventsCompleteWhenRecorded) {
  openreg_stream stream = NewStream(1);
  openreg_stream waiter = NewStream(2);
  openreg_event event = NewEvent(1, OPENREG_EVENT_DEFAULT);
  // An unrecorded event counts as complete.
  EXPECT_EQ(api_->event_query(event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_synchronize(event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_wait_event(waiter, event), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(event, stream), OPENREG_SUCCESS)
      << api_->last_error_message();
  EXPECT_EQ(api_->event_query(event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_synchronize(event), OPENREG_SUCCESS);
  // Streams and events may be on different devices.
  EXPECT_EQ(api_->stream_wait_event(waiter, event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_synchronize(1), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(waiter), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, ElapsedTimeBetweenTimingEvents) {
  openreg_stream stream = NewStream(0);
  openreg_event start = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event end = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  ASSERT_EQ(api_->event_record(start, stream), OPENREG_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(api_->event_record(end, stream), OPENREG_SUCCESS);
  float ms = -1;
  ASSERT_EQ(api_->event_elapsed_time(start, end, &ms), OPENREG_SUCCESS)
      << api_->last_error_message();
  EXPECT_GE(ms, 19.0f);
  EXPECT_LT(ms, 10000.0f);
  EXPECT_EQ(api_->event_destroy(start), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(end), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, ElapsedTimeNeedsRecordedTimingEvents) {
  openreg_stream stream = NewStream(0);
  openreg_event timing = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event plain = NewEvent(0, OPENREG_EVENT_DEFAULT);
  openreg_event unrecorded = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  ASSERT_EQ(api_->event_record(timing, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_record(plain, stream), OPENREG_SUCCESS);
  float ms = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_elapsed_time(plain, timing, &ms),
                        {"start event", "OPENREG_EVENT_ENABLE_TIMING"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_elapsed_time(timing, plain, &ms),
                        {"end event", "OPENREG_EVENT_ENABLE_TIMING"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_elapsed_time(timing, unrecorded, &ms),
                        {"end event", "never recorded", "event_record"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_elapsed_time(unrecorded, timing, &ms),
                        {"start event", "never recorded"}));
  EXPECT_EQ(api_->event_destroy(timing), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(plain), OPENREG_SUCCESS);
  EXPECT_EQ(api_->event_destroy(unrecorded), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, EventRecordRequiresTheEventsDevice) {
  openreg_stream stream = NewStream(1);
  openreg_event event = NewEvent(0, OPENREG_EVENT_DEFAULT);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_record(event, stream),
                        {"belongs to device 0", "stream belongs to device 1"}));
  EXPECT_EQ(api_->event_destroy(event), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, UnknownEventFlagsAreNotSupported) {
  openreg_event event = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_NOT_SUPPORTED,
                        api_->event_create(0, 0x5, &event),
                        {"flags 0x5", "bits 0x4",
                         "OPENREG_EVENT_ENABLE_TIMING"}));
  EXPECT_EQ(event, nullptr);
}

TEST_F(CpuSimTest, DestroyedEventsAreRejected) {
  openreg_stream stream = NewStream(0);
  openreg_event event = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  openreg_event live = NewEvent(0, OPENREG_EVENT_ENABLE_TIMING);
  ASSERT_EQ(api_->event_record(live, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_destroy(event), OPENREG_SUCCESS);
  float ms = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_destroy(event),
                        {"event_destroy", "not a live event"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_query(event),
                        {"event_query", "not a live event"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_synchronize(event),
                        {"event_synchronize", "not a live event"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_record(event, stream),
                        {"event_record", "not a live event"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_wait_event(stream, event),
                        {"stream_wait_event", "not a live event"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_elapsed_time(live, event, &ms),
                        {"event_elapsed_time", "not a live event"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_query(nullptr),
                        {"event_query", "event is NULL"}));
  EXPECT_EQ(api_->event_destroy(live), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
}

// --- Host functions ----------------------------------------------------------

struct Trace {
  std::vector<int> order;
  int next = 0;
};

openreg_status AppendNext(void* user_data) {
  auto* trace = static_cast<Trace*>(user_data);
  trace->order.push_back(trace->next++);
  return OPENREG_SUCCESS;
}

TEST_F(CpuSimTest, HostFunctionsRunInStreamOrder) {
  openreg_stream stream = NewStream(0);
  Trace trace;
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(api_->launch_host_func(stream, AppendNext, &trace),
              OPENREG_SUCCESS);
  }
  ASSERT_EQ(api_->stream_synchronize(stream), OPENREG_SUCCESS);
  EXPECT_EQ(trace.order, (std::vector<int>{0, 1, 2, 3, 4}));

  // Copies enqueued before a host function are visible to it.
  char* device = static_cast<char*>(DeviceAlloc(0, 8));
  const char message[8] = "openreg";
  ASSERT_EQ(api_->memcpy_async(device, message, sizeof(message),
                               OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  struct Check {
    const char* device;
    bool saw_message = false;
  } check{device};
  ASSERT_EQ(api_->launch_host_func(
                stream,
                [](void* user_data) -> openreg_status {
                  auto* c = static_cast<Check*>(user_data);
                  c->saw_message = std::strcmp(c->device, "openreg") == 0;
                  return OPENREG_SUCCESS;
                },
                &check),
            OPENREG_SUCCESS);
  EXPECT_TRUE(check.saw_message);
  EXPECT_EQ(api_->device_free(0, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, HostFunctionMayCallTheDriver) {
  openreg_stream stream = NewStream(0);
  struct Nested {
    const openreg_driver_api* api;
    openreg_status status = OPENREG_ERROR_INTERNAL;
  } nested{api_};
  ASSERT_EQ(api_->launch_host_func(
                stream,
                [](void* user_data) -> openreg_status {
                  auto* n = static_cast<Nested*>(user_data);
                  void* ptr = nullptr;
                  n->status = n->api->device_malloc(0, 64, &ptr);
                  if (n->status == OPENREG_SUCCESS) {
                    n->status = n->api->device_free(0, ptr);
                  }
                  return n->status;
                },
                &nested),
            OPENREG_SUCCESS)
      << api_->last_error_message();
  EXPECT_EQ(nested.status, OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
}

TEST_F(CpuSimTest, FailingHostFunctionIsReportedByTheLaunch) {
  openreg_stream stream = NewStream(0);
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_LAUNCH_FAILURE,
      api_->launch_host_func(
          stream,
          [](void*) -> openreg_status { return OPENREG_ERROR_INVALID_DEVICE; },
          nullptr),
      {"host function", "returned status 2", "OPENREG_ERROR_INVALID_DEVICE"}));
  // The failure was reported synchronously, so it is not sticky.
  EXPECT_EQ(api_->stream_query(stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_synchronize(0), OPENREG_SUCCESS);
  Trace trace;
  EXPECT_EQ(api_->launch_host_func(stream, AppendNext, &trace),
            OPENREG_SUCCESS);
  EXPECT_EQ(trace.order.size(), 1u);
  EXPECT_EQ(api_->stream_destroy(stream), OPENREG_SUCCESS);
}

// --- Threads -----------------------------------------------------------------

TEST_F(CpuSimTest, LastErrorMessageIsPerThread) {
  void* ptr = nullptr;
  ASSERT_EQ(api_->device_malloc(7, 1, &ptr), OPENREG_ERROR_INVALID_DEVICE);
  const std::string mine = api_->last_error_message();
  std::string theirs;
  std::thread other([&] {
    theirs = api_->last_error_message();
    api_->host_free(&theirs);
  });
  other.join();
  EXPECT_EQ(theirs, "");
  EXPECT_EQ(api_->last_error_message(), mine);
}

TEST_F(CpuSimTest, ConcurrentUseKeepsAccountingConsistent) {
  constexpr int kThreads = 4;
  constexpr int kIterations = 200;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, &failures] {
      const int32_t device = t % kDeviceCount;
      openreg_stream stream = nullptr;
      if (api_->stream_create(device, 0, &stream) != OPENREG_SUCCESS) {
        ++failures[t];
        return;
      }
      for (int i = 0; i < kIterations; ++i) {
        // At most 2 blocks of <= 64 KiB per thread stay within capacity.
        const size_t size = 1 + (static_cast<size_t>(t * 7919 + i * 104729) %
                                 (64 * 1024));
        void* a = nullptr;
        void* b = nullptr;
        if (api_->device_malloc(device, size, &a) != OPENREG_SUCCESS ||
            api_->device_malloc(device, size, &b) != OPENREG_SUCCESS) {
          ++failures[t];
          break;
        }
        const std::vector<unsigned char> source =
            Pattern(size, static_cast<unsigned char>(t + i));
        std::vector<unsigned char> result(size);
        openreg_pointer_attributes attributes{};
        attributes.struct_size = sizeof(attributes);
        uint64_t free_bytes = 0;
        uint64_t total_bytes = 0;
        const bool ok =
            api_->memcpy_async(a, source.data(), size,
                               OPENREG_MEMCPY_HOST_TO_DEVICE,
                               stream) == OPENREG_SUCCESS &&
            api_->memcpy_async(b, a, size, OPENREG_MEMCPY_DEVICE_TO_DEVICE,
                               stream) == OPENREG_SUCCESS &&
            api_->memcpy_async(result.data(), b, size,
                               OPENREG_MEMCPY_DEVICE_TO_HOST,
                               stream) == OPENREG_SUCCESS &&
            api_->pointer_get_attributes(static_cast<char*>(b) + size - 1,
                                         &attributes) == OPENREG_SUCCESS &&
            attributes.base == b && attributes.device == device &&
            api_->mem_get_info(device, &free_bytes, &total_bytes) ==
                OPENREG_SUCCESS &&
            free_bytes <= total_bytes - 2 * size && result == source;
        if (!ok) ++failures[t];
        openreg_event event = nullptr;
        float ms = -1;
        if (api_->event_create(device, OPENREG_EVENT_ENABLE_TIMING, &event) !=
                OPENREG_SUCCESS ||
            api_->event_record(event, stream) != OPENREG_SUCCESS ||
            api_->event_elapsed_time(event, event, &ms) != OPENREG_SUCCESS ||
            ms != 0.0f || api_->event_destroy(event) != OPENREG_SUCCESS) {
          ++failures[t];
        }
        if (api_->device_free(device, a) != OPENREG_SUCCESS ||
            api_->device_free(device, b) != OPENREG_SUCCESS) {
          ++failures[t];
        }
      }
      if (api_->stream_destroy(stream) != OPENREG_SUCCESS) ++failures[t];
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
  }
  for (int32_t device = 0; device < kDeviceCount; ++device) {
    EXPECT_EQ(FreeBytes(device), kCapacity) << "device " << device;
  }
}

}  // namespace
