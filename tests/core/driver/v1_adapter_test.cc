// The 1.x adapter, on the minimal driver as written for ABI 1.0: one context
// at a time, only live contexts reach the driver, its own messages per
// thread, the driver's statuses passed on.
#include "core/driver/v1_adapter.h"

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "core/driver/driver_library.h"
#include "driver_abi/openreg_driver_v1.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/driver/test_paths.h"

namespace openreg {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class V1AdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto library = DriverLibrary::Load(kMinimalV1Path);
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = *std::move(library);
  }
  const openreg_driver_api& api() const { return library_->api(); }

  std::shared_ptr<const DriverLibrary> library_;
};

TEST_F(V1AdapterTest, OneContextAtATimeEvenAcrossLoads) {
  openreg_context first = nullptr;
  ASSERT_EQ(library_->CreateContext(nullptr, &first), OPENREG_SUCCESS);
  openreg_context second = nullptr;
  EXPECT_EQ(library_->CreateContext(nullptr, &second),
            OPENREG_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(second, nullptr);
  EXPECT_THAT(std::string(api().last_error_message(nullptr)),
              AllOf(HasSubstr("'minimal_v1' implements driver ABI 1.0"),
                    HasSubstr("one process-wide instance")));
  // The same library loaded again is the same instance.
  auto again = DriverLibrary::Load(kMinimalV1Path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->CreateContext(nullptr, &second),
            OPENREG_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(api().context_destroy(first), OPENREG_SUCCESS);
  ASSERT_EQ((*again)->CreateContext(nullptr, &second), OPENREG_SUCCESS);
  EXPECT_EQ((*again)->api().context_destroy(second), OPENREG_SUCCESS);
}

TEST_F(V1AdapterTest, TableCannotCreateAContextItself) {
  openreg_context context = nullptr;
  EXPECT_EQ(api().context_create(nullptr, &context),
            OPENREG_ERROR_NOT_SUPPORTED);
  EXPECT_THAT(std::string(api().last_error_message(nullptr)),
              HasSubstr("DriverLibrary::CreateContext"));
}

TEST_F(V1AdapterTest, StreamGetPriorityNeeds1_1) {
  openreg_context context = nullptr;
  ASSERT_EQ(library_->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  openreg_stream stream = nullptr;
  ASSERT_EQ(api().stream_create(context, 0, 0, &stream), OPENREG_SUCCESS);
  int32_t priority = 0;
  EXPECT_EQ(api().stream_get_priority(context, stream, &priority),
            OPENREG_ERROR_NOT_SUPPORTED);
  EXPECT_THAT(std::string(api().last_error_message(context)),
              AllOf(HasSubstr("'minimal_v1' implements driver ABI 1.0"),
                    HasSubstr("stream_get_priority needs ABI 1.1")));
  // Messages are per thread: another thread has its own.
  std::thread([&] {
    EXPECT_STREQ(api().last_error_message(nullptr), "");
  }).join();
  // A later failure of the driver itself replaces the adapter's message.
  EXPECT_EQ(api().stream_destroy(context, nullptr),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api().last_error_message(context)),
              HasSubstr("minimal_driver_v1: stream_destroy"));
  EXPECT_EQ(api().stream_destroy(context, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api().context_destroy(context), OPENREG_SUCCESS);
}

TEST_F(V1AdapterTest, NullContextIsRejected) {
  int32_t count = 0;
  EXPECT_EQ(api().get_device_count(nullptr, &count),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api().last_error_message(nullptr)),
              HasSubstr("the context is NULL"));
}

// A destroyed context never reaches the 1.x driver, which would answer
// NOT_INITIALIZED after its shutdown; the ABI says INVALID_ARGUMENT.
TEST_F(V1AdapterTest, DestroyedContextIsRejected) {
  openreg_context context = nullptr;
  ASSERT_EQ(library_->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  ASSERT_EQ(api().context_destroy(context), OPENREG_SUCCESS);
  int32_t count = 0;
  EXPECT_EQ(api().get_device_count(context, &count),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api().last_error_message(context)),
              AllOf(HasSubstr("is not a live context"),
                    HasSubstr("destroyed by context_destroy")));
  EXPECT_EQ(api().context_destroy(context), OPENREG_ERROR_INVALID_ARGUMENT);
  // A new context is a new number: the dead one stays dead.
  openreg_context next = nullptr;
  ASSERT_EQ(library_->CreateContext(nullptr, &next), OPENREG_SUCCESS);
  EXPECT_NE(next, context);
  EXPECT_EQ(api().get_device_count(context, &count),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(api().get_device_count(next, &count), OPENREG_SUCCESS);
  EXPECT_EQ(api().context_destroy(next), OPENREG_SUCCESS);
}

// A context the adapter never gave out is rejected without being read: the
// made-up handle is an address in the first page above NULL, which Linux never
// maps (vm.mmap_min_addr), so a read of it would crash the test.
TEST_F(V1AdapterTest, MadeUpContextIsRejected) {
  openreg_context live = nullptr;
  ASSERT_EQ(library_->CreateContext(nullptr, &live), OPENREG_SUCCESS);
  const openreg_context context =
      reinterpret_cast<openreg_context>(uintptr_t{0x1008});
  int32_t count = 0;
  EXPECT_EQ(api().get_device_count(context, &count),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api().last_error_message(nullptr)),
              HasSubstr("never returned by DriverLibrary::CreateContext"));
  int32_t priority = 0;
  EXPECT_EQ(api().stream_get_priority(context, nullptr, &priority),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(api().context_destroy(context), OPENREG_ERROR_INVALID_ARGUMENT);
  // The live context was not touched.
  EXPECT_EQ(api().get_device_count(live, &count), OPENREG_SUCCESS);
  EXPECT_EQ(api().context_destroy(live), OPENREG_SUCCESS);
}

TEST_F(V1AdapterTest, FailedInitKeepsTheDriversMessage) {
  openreg_driver_config config{};
  config.struct_size = OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0;
  config.options = "bogus=1";
  openreg_context context = nullptr;
  EXPECT_EQ(library_->CreateContext(&config, &context),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api().last_error_message(nullptr)),
              HasSubstr("unknown option in 'bogus=1'"));
  // The failed init left no context behind.
  ASSERT_EQ(library_->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  EXPECT_EQ(api().context_destroy(context), OPENREG_SUCCESS);
}

// A context destroyed on one thread is rejected on another thread that used
// it before: the lookup keeps nothing per thread.
TEST_F(V1AdapterTest, DestroyedOnOneThreadIsRejectedOnAnother) {
  openreg_context context = nullptr;
  ASSERT_EQ(library_->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  absl::Notification used;
  absl::Notification destroyed;
  openreg_status before = OPENREG_ERROR_INTERNAL;
  openreg_status after = OPENREG_SUCCESS;
  std::thread other([&] {
    int32_t count = 0;
    before = api().get_device_count(context, &count);
    used.Notify();
    destroyed.WaitForNotification();
    after = api().get_device_count(context, &count);
  });
  used.WaitForNotification();
  ASSERT_EQ(api().context_destroy(context), OPENREG_SUCCESS);
  destroyed.Notify();
  other.join();
  EXPECT_EQ(before, OPENREG_SUCCESS);
  EXPECT_EQ(after, OPENREG_ERROR_INVALID_ARGUMENT);
}

// A 1.x table whose init and shutdown always succeed: each copy stands for
// another 1.x driver (the adapter tells drivers apart by their table).
openreg_status Succeed(const openreg_driver_config*) { return OPENREG_SUCCESS; }
openreg_status SucceedShutdown() { return OPENREG_SUCCESS; }
const char* NoMessage() { return ""; }

openreg_driver_api_v1 TrivialDriver() {
  openreg_driver_api_v1 table{};
  table.struct_size = sizeof(table);
  table.abi_version_major = 1;
  table.abi_version_minor = 0;
  table.driver_name = "trivial";
  table.driver_version = "1.0.0";
  table.init = &Succeed;
  table.shutdown = &SucceedShutdown;
  table.last_error_message = &NoMessage;
  return table;
}

// 64 1.x drivers have a context at once; one more is refused, saying why,
// until one of theirs is destroyed.
TEST(V1AdapterSlotsTest, SixtyFourDriversAtOnce) {
  constexpr int kDrivers = 65;
  std::vector<openreg_driver_api_v1> tables(kDrivers, TrivialDriver());
  std::vector<std::unique_ptr<V1Adapter>> adapters;
  for (const openreg_driver_api_v1& table : tables) {
    adapters.push_back(std::make_unique<V1Adapter>(table));
  }
  std::vector<openreg_context> contexts(kDrivers, nullptr);
  for (int i = 0; i + 1 < kDrivers; ++i) {
    ASSERT_EQ(adapters[i]->CreateContext(nullptr, &contexts[i]),
              OPENREG_SUCCESS)
        << i;
  }
  const openreg_driver_api& api = adapters[0]->api();
  EXPECT_EQ(adapters.back()->CreateContext(nullptr, &contexts.back()),
            OPENREG_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(contexts.back(), nullptr);
  EXPECT_THAT(std::string(api.last_error_message(nullptr)),
              AllOf(HasSubstr("'trivial' implements driver ABI 1.0"),
                    HasSubstr("64 other 1.x drivers already have a context")));
  ASSERT_EQ(api.context_destroy(contexts[7]), OPENREG_SUCCESS);
  ASSERT_EQ(adapters.back()->CreateContext(nullptr, &contexts.back()),
            OPENREG_SUCCESS);
  // The new context took the freed slot under a new number.
  EXPECT_NE(contexts.back(), contexts[7]);
  EXPECT_EQ(api.context_destroy(contexts[7]), OPENREG_ERROR_INVALID_ARGUMENT);
  for (int i = 0; i < kDrivers; ++i) {
    if (i == 7) continue;
    EXPECT_EQ(api.context_destroy(contexts[i]), OPENREG_SUCCESS) << i;
  }
}

}  // namespace
}  // namespace openreg
