// The validation layer's contexts (core/driver/validation_layer.h), through
// its raw table, on every 2.0 driver (the minimal example and both shipped
// drivers) and on the 1.0 minimal driver behind the adapter: Wrap and its
// failures, calls with a NULL, made-up or destroyed context, handles of
// another or a destroyed context, several layers at once each keeping its own
// first misuse, and a driver that reports success without a handle.
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/driver/driver_library.h"
#include "core/driver/validation_layer.h"
#include "driver_abi/openreg_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/driver/test_paths.h"

namespace openreg {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

openreg_driver_config TwoDevices() {
  openreg_driver_config config{};
  config.struct_size = OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0;
  config.device_count = 2;
  config.device_memory_bytes = uint64_t{1} << 20;
  return config;
}

std::unique_ptr<ValidationLayer> WrapNewContext(const DriverLibrary& library) {
  const openreg_driver_config config = TwoDevices();
  openreg_context context = nullptr;
  EXPECT_EQ(library.CreateContext(&config, &context), OPENREG_SUCCESS)
      << library.api().last_error_message(nullptr);
  absl::StatusOr<std::unique_ptr<ValidationLayer>> layer =
      ValidationLayer::Wrap(library.api(), context);
  EXPECT_TRUE(layer.ok()) << layer.status();
  return layer.ok() ? *std::move(layer) : nullptr;
}

std::string LastError(const ValidationLayer& layer) {
  return layer.api().last_error_message(layer.context());
}

// The parameter: the path of a 2.0 driver.
class ValidationLayerContextTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<const DriverLibrary>> library =
        DriverLibrary::Load(GetParam());
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = *std::move(library);
  }
  std::shared_ptr<const DriverLibrary> library_;
};

INSTANTIATE_TEST_SUITE_P(Drivers20, ValidationLayerContextTest,
                         ::testing::Values(kMinimalPath,
                                           ShippedDriverPath("cpu_sim"),
                                           ShippedDriverPath("threaded_sim")));

TEST_P(ValidationLayerContextTest, TwoLayersCoexistAndKeepTheirOwnHandles) {
  std::unique_ptr<ValidationLayer> a = WrapNewContext(*library_);
  std::unique_ptr<ValidationLayer> b = WrapNewContext(*library_);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a->context(), b->context());
  openreg_stream stream = nullptr;
  ASSERT_EQ(a->api().stream_create(a->context(), 0, 0, &stream),
            OPENREG_SUCCESS);
  // A stream of layer a is unknown to layer b, and b says so.
  EXPECT_EQ(b->api().stream_query(b->context(), stream),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(*b),
              AllOf(HasSubstr("openreg driver validation: stream_query"),
                    HasSubstr("is not a stream of this driver")));
  EXPECT_THAT(b->first_misuse(), HasSubstr("stream_query"));
  EXPECT_THAT(a->first_misuse(), IsEmpty());
  EXPECT_EQ(a->api().stream_query(a->context(), stream), OPENREG_SUCCESS);
  EXPECT_EQ(a->api().stream_destroy(a->context(), stream), OPENREG_SUCCESS);
  EXPECT_EQ(a->api().stream_destroy(a->context(), stream),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(a->first_misuse(), HasSubstr("was destroyed by stream_destroy"));
}

// Each layer keeps the first misuse made through it, whatever the other
// layer saw before or after.
TEST_P(ValidationLayerContextTest, TwoLayersEachReportTheirOwnFirstMisuse) {
  std::unique_ptr<ValidationLayer> a = WrapNewContext(*library_);
  std::unique_ptr<ValidationLayer> b = WrapNewContext(*library_);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  int on_the_stack = 0;
  EXPECT_EQ(a->api().device_free(a->context(), 0, &on_the_stack),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(b->api().device_malloc(b->context(), 7, 16, nullptr),
            OPENREG_ERROR_INVALID_DEVICE);
  EXPECT_EQ(a->api().stream_synchronize(a->context(), nullptr),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(b->api().host_free(b->context(), &on_the_stack),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(a->first_misuse(),
              AllOf(HasSubstr("device_free(device=0, ptr="),
                    HasSubstr("never returned by device_malloc")));
  EXPECT_THAT(b->first_misuse(),
              AllOf(HasSubstr("device_malloc(device=7"),
                    HasSubstr("valid indices are 0 to 1")));
}

TEST_P(ValidationLayerContextTest, ChecksTheContext) {
  std::unique_ptr<ValidationLayer> layer = WrapNewContext(*library_);
  ASSERT_NE(layer, nullptr);
  const openreg_driver_api& api = layer->api();
  EXPECT_EQ(api.driver_name, library_->name());
  int32_t count = 0;
  EXPECT_EQ(api.get_device_count(nullptr, &count),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api.last_error_message(nullptr)),
              AllOf(HasSubstr("get_device_count(context="),
                    HasSubstr("'context' is NULL")));
  int made_up = 0;
  EXPECT_EQ(api.get_device_count(reinterpret_cast<openreg_context>(&made_up),
                                 &count),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api.last_error_message(nullptr)),
              HasSubstr("is not a context of the validation layer"));
  openreg_context created = nullptr;
  EXPECT_EQ(api.context_create(nullptr, &created),
            OPENREG_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(created, nullptr);
  EXPECT_THAT(std::string(api.last_error_message(nullptr)),
              HasSubstr("ValidationLayer::Wrap"));
  // None of these reached a layer: there is none to record them.
  EXPECT_THAT(layer->first_misuse(), IsEmpty());
}

// The 2.0 counterpart of "no call after shutdown": a destroyed context is
// rejected, its handles are unknown to any later context, and a new context
// (with its own layer) works.
TEST_P(ValidationLayerContextTest, DestroyedContextAndItsHandlesAreRejected) {
  std::unique_ptr<ValidationLayer> first = WrapNewContext(*library_);
  ASSERT_NE(first, nullptr);
  const openreg_driver_api& api = first->api();
  openreg_stream stream = nullptr;
  ASSERT_EQ(api.stream_create(first->context(), 0, 0, &stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api.context_destroy(first->context()), OPENREG_SUCCESS);
  EXPECT_EQ(api.stream_query(first->context(), stream),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api.last_error_message(first->context())),
              AllOf(HasSubstr("stream_query(context=0x"),
                    HasSubstr("was destroyed by context_destroy")));
  EXPECT_EQ(api.context_destroy(first->context()),
            OPENREG_ERROR_INVALID_ARGUMENT);

  std::unique_ptr<ValidationLayer> second = WrapNewContext(*library_);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->api().stream_query(second->context(), stream),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(*second), HasSubstr("is not a stream of this driver"));
  openreg_stream fresh = nullptr;
  EXPECT_EQ(second->api().stream_create(second->context(), 0, 0, &fresh),
            OPENREG_SUCCESS);
  EXPECT_EQ(second->api().stream_synchronize(second->context(), fresh),
            OPENREG_SUCCESS);
}

TEST_P(ValidationLayerContextTest, CatchesMisuseTheDriverWouldMiss) {
  std::unique_ptr<ValidationLayer> layer = WrapNewContext(*library_);
  ASSERT_NE(layer, nullptr);
  const openreg_driver_api& api = layer->api();
  openreg_context context = layer->context();
  void* ptr = nullptr;
  ASSERT_EQ(api.device_malloc(context, 0, 64, &ptr), OPENREG_SUCCESS);
  EXPECT_EQ(api.device_free(context, 1, ptr), OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(api.device_malloc(context, 5, 64, &ptr),
            OPENREG_ERROR_INVALID_DEVICE);
  openreg_stream stream = nullptr;
  ASSERT_EQ(api.stream_create(context, 0, 0, &stream), OPENREG_SUCCESS);
  char host[128] = {};
  EXPECT_EQ(api.memcpy_async(context, host, ptr, sizeof(host),
                             OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(*layer), HasSubstr("memcpy_async"));
  openreg_event event = nullptr;
  ASSERT_EQ(api.event_create(context, 0, OPENREG_EVENT_DEFAULT, &event),
            OPENREG_SUCCESS);
  float ms = 0;
  EXPECT_EQ(api.event_elapsed_time(context, event, event, &ms),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(api.device_free(context, 0, ptr), OPENREG_SUCCESS);
  // The layer, destroyed with its context alive, destroys the context.
}

TEST_P(ValidationLayerContextTest, WrapRefusesANullOrDeadContext) {
  absl::StatusOr<std::unique_ptr<ValidationLayer>> null_context =
      ValidationLayer::Wrap(library_->api(), nullptr);
  EXPECT_EQ(null_context.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(null_context.status().message()),
              AllOf(HasSubstr("cannot wrap a NULL context of driver"),
                    HasSubstr("create the context first")));

  openreg_context context = nullptr;
  ASSERT_EQ(library_->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  ASSERT_EQ(library_->api().context_destroy(context), OPENREG_SUCCESS);
  absl::StatusOr<std::unique_ptr<ValidationLayer>> dead =
      ValidationLayer::Wrap(library_->api(), context);
  EXPECT_EQ(dead.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(dead.status().message()),
              AllOf(HasSubstr("failed get_device_count with status 1"),
                    HasSubstr("get_device_count")));
}

TEST(ValidationLayerV1Test, WrapsAnAdapted1_0Context) {
  absl::StatusOr<std::shared_ptr<const DriverLibrary>> library =
      DriverLibrary::Load(kMinimalV1Path);
  ASSERT_TRUE(library.ok()) << library.status();
  std::unique_ptr<ValidationLayer> layer = WrapNewContext(**library);
  ASSERT_NE(layer, nullptr);
  openreg_stream stream = nullptr;
  ASSERT_EQ(layer->api().stream_create(layer->context(), 0, 0, &stream),
            OPENREG_SUCCESS);
  int32_t priority = 0;
  EXPECT_EQ(layer->api().stream_get_priority(layer->context(), stream,
                                             &priority),
            OPENREG_ERROR_NOT_SUPPORTED);
  EXPECT_THAT(LastError(*layer), HasSubstr("stream_get_priority needs ABI 1.1"));
  layer.reset();
  // The layer destroyed the adapted context: a new one can be created.
  openreg_context context = nullptr;
  ASSERT_EQ((*library)->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  EXPECT_EQ((*library)->api().context_destroy(context), OPENREG_SUCCESS);
}

// A driver that reports success without a handle is a driver bug.
openreg_status StreamCreateWithoutStream(openreg_context, int32_t, int32_t,
                                         openreg_stream* stream) {
  *stream = nullptr;
  return OPENREG_SUCCESS;
}

TEST(ValidationLayerDriverBugTest, SuccessWithoutAHandleIsInternal) {
  absl::StatusOr<std::shared_ptr<const DriverLibrary>> library =
      DriverLibrary::Load(ShippedDriverPath("cpu_sim"));
  ASSERT_TRUE(library.ok()) << library.status();
  openreg_driver_api buggy = (*library)->api();
  buggy.stream_create = StreamCreateWithoutStream;
  openreg_context context = nullptr;
  ASSERT_EQ((*library)->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  absl::StatusOr<std::unique_ptr<ValidationLayer>> layer =
      ValidationLayer::Wrap(buggy, context);
  ASSERT_TRUE(layer.ok()) << layer.status();
  openreg_stream stream = nullptr;
  EXPECT_EQ((*layer)->api().stream_create((*layer)->context(), 0, 0, &stream),
            OPENREG_ERROR_INTERNAL);
  EXPECT_THAT(LastError(**layer),
              HasSubstr("driver bug: the call succeeded but returned a NULL "
                        "stream"));
}

}  // namespace
}  // namespace openreg
