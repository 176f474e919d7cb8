// Injected faults (Note [Injected faults]) through the real driver libraries,
// loaded with dlopen as the core loads them, on both simulated drivers: the
// fault_* options reach the injector through context_create, bad ones fail it
// with a message that says what is expected, each entry point fails exactly
// as configured, and a soak of thousands of calls with a fault rate leaves
// nothing behind (device memory back to free; ASan: no leak, no use after
// free of the work a refused launch gave back).
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "driver_abi/openreg_driver.h"
#include "gtest/gtest.h"

namespace {

// Relative to the runfiles root, the working directory of a Bazel test.
std::string LibraryPath(const std::string& driver) {
  return "plugins/" + driver + "/libopenreg_" + driver + ".so";
}

const openreg_driver_api* Load(const std::string& driver) {
  void* handle = dlopen(LibraryPath(driver).c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(handle, nullptr) << dlerror();
  if (handle == nullptr) return nullptr;
  auto entry = reinterpret_cast<openreg_driver_get_api_fn>(
      dlsym(handle, OPENREG_DRIVER_ENTRY_SYMBOL_NAME));
  const openreg_driver_api* api = nullptr;
  if (entry == nullptr ||
      entry(OPENREG_DRIVER_ABI_VERSION_MAJOR, OPENREG_DRIVER_ABI_VERSION_MINOR,
            &api) != OPENREG_SUCCESS) {
    ADD_FAILURE() << "cannot get the table of " << driver;
    return nullptr;
  }
  return api;
}

bool Contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

constexpr uint64_t kDeviceMemory = uint64_t{64} << 20;

class FaultSoakTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    api_ = Load(GetParam());
    ASSERT_NE(api_, nullptr);
  }

  void TearDown() override {
    if (context_ != nullptr) {
      EXPECT_EQ(api_->context_destroy(context_), OPENREG_SUCCESS);
    }
  }

  openreg_status Create(const char* options, openreg_context* context) {
    openreg_driver_config config{};
    config.struct_size = sizeof(config);
    config.device_count = 1;
    config.device_memory_bytes = kDeviceMemory;
    config.options = options;
    *context = nullptr;
    return api_->context_create(&config, context);
  }

  // Makes context_ and stream_ with `options`; fails the test otherwise.
  void Init(const char* options) {
    ASSERT_EQ(Create(options, &context_), OPENREG_SUCCESS)
        << api_->last_error_message(nullptr);
    ASSERT_EQ(api_->stream_create(context_, 0, 0, &stream_), OPENREG_SUCCESS);
  }

  std::string Message() const { return api_->last_error_message(context_); }

  // `status` is an injected fault of `expected` at `point`.
  void ExpectInjected(openreg_status status, openreg_status expected,
                      const char* point) {
    EXPECT_EQ(status, expected) << point;
    const std::string message = Message();
    EXPECT_TRUE(Contains(message, std::string(point) + ": injected fault"))
        << message;
    EXPECT_TRUE(Contains(message, std::string("fault_points names ") + point))
        << message;
  }

  const openreg_driver_api* api_ = nullptr;
  openreg_context context_ = nullptr;
  openreg_stream stream_ = nullptr;
};

TEST_P(FaultSoakTest, BadFaultOptionsFailContextCreateSayingWhatIsExpected) {
  struct Case {
    const char* options;
    const char* fragment;
  };
  const Case cases[] = {
      {"fault_points=kernel_launch,fault_rate=0.1",
       "fault_points names \"kernel_launch\", which is not an entry point "
       "faults can be injected into; expected a '+'-separated list of "
       "device_malloc, host_malloc, memcpy_async"},
      {"fault_points=memcpy_async,fault_rate=2",
       "fault_rate=\"2\" is not valid; expected a number from 0 to 1"},
      {"fault_points=memcpy_async:OOM,fault_rate=0.5",
       "gives memcpy_async the status \"OOM\"; expected INVALID_ARGUMENT, "
       "OUT_OF_MEMORY"},
      {"fault_points=event_record", "without fault_rate or fault_on_call"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.options);
    openreg_context context = nullptr;
    EXPECT_EQ(Create(c.options, &context), OPENREG_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(context, nullptr);
    const std::string message = api_->last_error_message(nullptr);
    EXPECT_TRUE(Contains(message, c.fragment)) << message;
    EXPECT_TRUE(Contains(message, c.options)) << message;
    EXPECT_TRUE(Contains(message, "docs/fault_injection.md")) << message;
  }
  // The driver's own option errors still name the unknown key.
  openreg_context context = nullptr;
  EXPECT_EQ(Create("fault_points=host_malloc,fault_rate=0,threads=4", &context),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(api_->last_error_message(nullptr), "\"threads\""))
      << api_->last_error_message(nullptr);
}

openreg_status Count(void* counter) {
  static_cast<std::atomic<int>*>(counter)->fetch_add(1);
  return OPENREG_SUCCESS;
}

// fault_on_call=2: the second call of every listed point fails with its
// status, and no other call does.
TEST_P(FaultSoakTest, EachPointFailsOnTheConfiguredCallOnly) {
  Init(
      "fault_points=device_malloc+host_malloc+memcpy_async:INTERNAL+"
      "memset_async+launch_host_func+event_record:NOT_SUPPORTED,"
      "fault_on_call=2");
  openreg_event event = nullptr;
  ASSERT_EQ(api_->event_create(context_, 0, OPENREG_EVENT_DEFAULT, &event),
            OPENREG_SUCCESS);
  std::atomic<int> ran{0};
  void* device[3] = {};
  void* host[3] = {};
  for (int call = 1; call <= 3; ++call) {
    const bool fails = call == 2;
    SCOPED_TRACE(call);
    openreg_status s = api_->device_malloc(context_, 0, 256, &device[call - 1]);
    if (fails) {
      ExpectInjected(s, OPENREG_ERROR_OUT_OF_MEMORY, "device_malloc");
      ASSERT_EQ(api_->device_malloc(context_, 0, 256, &device[call - 1]),
                OPENREG_SUCCESS);
    } else {
      ASSERT_EQ(s, OPENREG_SUCCESS) << Message();
    }
    s = api_->host_malloc(context_, 256, &host[call - 1]);
    if (fails) {
      ExpectInjected(s, OPENREG_ERROR_OUT_OF_MEMORY, "host_malloc");
      ASSERT_EQ(api_->host_malloc(context_, 256, &host[call - 1]),
                OPENREG_SUCCESS);
    } else {
      ASSERT_EQ(s, OPENREG_SUCCESS) << Message();
    }
    s = api_->memset_async(context_, device[call - 1], call, 256, stream_);
    if (fails) {
      ExpectInjected(s, OPENREG_ERROR_LAUNCH_FAILURE, "memset_async");
    } else {
      EXPECT_EQ(s, OPENREG_SUCCESS) << Message();
    }
    s = api_->memcpy_async(context_, host[call - 1], device[call - 1], 256,
                           OPENREG_MEMCPY_DEVICE_TO_HOST, stream_);
    if (fails) {
      ExpectInjected(s, OPENREG_ERROR_INTERNAL, "memcpy_async");
    } else {
      EXPECT_EQ(s, OPENREG_SUCCESS) << Message();
    }
    s = api_->launch_host_func(context_, stream_, &Count, &ran);
    if (fails) {
      ExpectInjected(s, OPENREG_ERROR_LAUNCH_FAILURE, "launch_host_func");
    } else {
      EXPECT_EQ(s, OPENREG_SUCCESS) << Message();
    }
    s = api_->event_record(context_, event, stream_);
    if (fails) {
      ExpectInjected(s, OPENREG_ERROR_NOT_SUPPORTED, "event_record");
    } else {
      EXPECT_EQ(s, OPENREG_SUCCESS) << Message();
    }
    // A refused call leaves nothing sticky behind.
    EXPECT_EQ(api_->stream_synchronize(context_, stream_), OPENREG_SUCCESS)
        << Message();
  }
  // The refused launch never ran its host function; the refused memset and
  // copy never touched memory.
  EXPECT_EQ(ran.load(), 2);
  EXPECT_EQ(static_cast<unsigned char*>(host[0])[0], 1);
  EXPECT_EQ(static_cast<unsigned char*>(host[2])[255], 3);
  EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(api_->device_free(context_, 0, device[i]), OPENREG_SUCCESS);
    EXPECT_EQ(api_->host_free(context_, host[i]), OPENREG_SUCCESS);
  }
}

// A bad call gets its own error, not an injected one, and is not counted.
TEST_P(FaultSoakTest, InvalidCallsAreNotFaulted) {
  Init("fault_points=memset_async+event_record,fault_on_call=1");
  EXPECT_EQ(api_->memset_async(context_, nullptr, 0, 16, stream_),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_FALSE(Contains(Message(), "injected")) << Message();
  EXPECT_EQ(api_->event_record(context_, nullptr, stream_),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_FALSE(Contains(Message(), "injected")) << Message();
  void* device = nullptr;
  ASSERT_EQ(api_->device_malloc(context_, 0, 64, &device), OPENREG_SUCCESS);
  ExpectInjected(api_->memset_async(context_, device, 0, 64, stream_),
                 OPENREG_ERROR_LAUNCH_FAILURE, "memset_async");
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
}

// Work a launch hands to its host function, which frees it: a refused launch
// leaves it with the caller, who must free it (ASan reports either leak or
// double free).
struct Work {
  std::atomic<int>* ran;
  std::vector<char> payload = std::vector<char>(64);
};

openreg_status RunWork(void* user_data) {
  auto* work = static_cast<Work*>(user_data);
  work->ran->fetch_add(1);
  delete work;
  return OPENREG_SUCCESS;
}

// Retries `call` until it succeeds, counting the injected faults it met.
template <typename Call>
void UntilSuccess(const openreg_driver_api* api, openreg_context context,
                  int* faults, Call call) {
  for (;;) {
    const openreg_status s = call();
    if (s == OPENREG_SUCCESS) return;
    const std::string message = api->last_error_message(context);
    ASSERT_TRUE(Contains(message, "injected fault")) << message;
    ++*faults;
  }
}

TEST_P(FaultSoakTest, ThousandsOfFaultsLeaveNothingBehind) {
  Init(
      "fault_points=device_malloc+host_malloc+memcpy_async+memset_async+"
      "launch_host_func+event_record,fault_rate=0.2,fault_seed=16");
  openreg_event event = nullptr;
  ASSERT_EQ(api_->event_create(context_, 0, OPENREG_EVENT_DEFAULT, &event),
            OPENREG_SUCCESS);
  std::atomic<int> ran{0};
  int faults = 0;
  int launched = 0;
  constexpr int kRounds = 1500;
  constexpr size_t kBytes = 4096;
  for (int round = 0; round < kRounds; ++round) {
    void* device = nullptr;
    void* host = nullptr;
    UntilSuccess(api_, context_, &faults, [&] {
      return api_->device_malloc(context_, 0, kBytes, &device);
    });
    UntilSuccess(api_, context_, &faults,
                 [&] { return api_->host_malloc(context_, kBytes, &host); });
    const int value = round & 0xff;
    UntilSuccess(api_, context_, &faults, [&] {
      return api_->memset_async(context_, device, value, kBytes, stream_);
    });
    UntilSuccess(api_, context_, &faults, [&] {
      return api_->memcpy_async(context_, host, device, kBytes,
                                OPENREG_MEMCPY_DEVICE_TO_HOST, stream_);
    });
    UntilSuccess(api_, context_, &faults, [&] {
      auto* work = new Work{&ran};
      const openreg_status s =
          api_->launch_host_func(context_, stream_, &RunWork, work);
      if (s != OPENREG_SUCCESS) delete work;  // refused: still ours
      return s;
    });
    ++launched;
    UntilSuccess(api_, context_, &faults,
                 [&] { return api_->event_record(context_, event, stream_); });
    ASSERT_EQ(api_->event_synchronize(context_, event), OPENREG_SUCCESS)
        << Message();
    ASSERT_EQ(static_cast<unsigned char*>(host)[kBytes - 1], value);
    ASSERT_EQ(api_->host_free(context_, host), OPENREG_SUCCESS);
    ASSERT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
  }
  ASSERT_EQ(api_->stream_synchronize(context_, stream_), OPENREG_SUCCESS);
  EXPECT_EQ(ran.load(), launched);
  // 6 points at 20%: about 1.5 faults a round.
  EXPECT_GE(faults, 1000);
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  ASSERT_EQ(api_->mem_get_info(context_, 0, &free_bytes, &total_bytes),
            OPENREG_SUCCESS);
  EXPECT_EQ(free_bytes, total_bytes);
  EXPECT_EQ(api_->event_destroy(context_, event), OPENREG_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(BothSimulatedDrivers, FaultSoakTest,
                         ::testing::Values("cpu_sim", "threaded_sim"),
                         [](const auto& info) { return info.param; });

}  // namespace
