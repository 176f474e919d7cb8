// The driver validation layer over contexts of the minimal driver (2.0, and
// 1.0 through the adapter): misuse is caught and named, contexts are checked,
// and several layers coexist in one process.
#include "core/driver/validation_layer.h"

#include <memory>
#include <string>

#include "core/driver/driver_library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/driver/test_paths.h"

namespace openreg {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::unique_ptr<ValidationLayer> WrapNewContext(const DriverLibrary& library) {
  openreg_context context = nullptr;
  EXPECT_EQ(library.CreateContext(nullptr, &context), OPENREG_SUCCESS);
  auto layer = ValidationLayer::Wrap(library.api(), context);
  EXPECT_TRUE(layer.ok()) << layer.status();
  return layer.ok() ? *std::move(layer) : nullptr;
}

class ValidationLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto library = DriverLibrary::Load(kMinimalPath);
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = *std::move(library);
  }
  std::shared_ptr<const DriverLibrary> library_;
};

TEST_F(ValidationLayerTest, TwoLayersCoexistAndKeepTheirOwnHandles) {
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
  EXPECT_THAT(std::string(b->api().last_error_message(b->context())),
              AllOf(HasSubstr("openreg driver validation: stream_query"),
                    HasSubstr("is not a stream of this driver")));
  EXPECT_THAT(b->first_misuse(), HasSubstr("stream_query"));
  EXPECT_EQ(a->first_misuse(), "");
  EXPECT_EQ(a->api().stream_query(a->context(), stream), OPENREG_SUCCESS);
  EXPECT_EQ(a->api().stream_destroy(a->context(), stream), OPENREG_SUCCESS);
  EXPECT_EQ(a->api().stream_destroy(a->context(), stream),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(a->first_misuse(), HasSubstr("was destroyed by stream_destroy"));
}

TEST_F(ValidationLayerTest, ChecksTheContext) {
  std::unique_ptr<ValidationLayer> layer = WrapNewContext(*library_);
  ASSERT_NE(layer, nullptr);
  const openreg_driver_api& api = layer->api();
  int32_t count = 0;
  EXPECT_EQ(api.get_device_count(nullptr, &count),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api.last_error_message(nullptr)),
              HasSubstr("'context' is NULL"));
  int made_up = 0;
  EXPECT_EQ(api.get_device_count(reinterpret_cast<openreg_context>(&made_up),
                                 &count),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api.last_error_message(nullptr)),
              HasSubstr("is not a context of the validation layer"));
  openreg_context created = nullptr;
  EXPECT_EQ(api.context_create(nullptr, &created),
            OPENREG_ERROR_NOT_SUPPORTED);
  EXPECT_THAT(std::string(api.last_error_message(nullptr)),
              HasSubstr("ValidationLayer::Wrap"));
  ASSERT_EQ(api.context_destroy(layer->context()), OPENREG_SUCCESS);
  EXPECT_EQ(api.get_device_count(layer->context(), &count),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(api.last_error_message(nullptr)),
              HasSubstr("was destroyed by context_destroy"));
}

TEST_F(ValidationLayerTest, CatchesMisuseTheDriverWouldMiss) {
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
  EXPECT_THAT(std::string(api.last_error_message(context)),
              HasSubstr("memcpy_async"));
  openreg_event event = nullptr;
  ASSERT_EQ(api.event_create(context, 0, OPENREG_EVENT_DEFAULT, &event),
            OPENREG_SUCCESS);
  float ms = 0;
  EXPECT_EQ(api.event_elapsed_time(context, event, event, &ms),
            OPENREG_ERROR_INVALID_ARGUMENT);
  int32_t priority = 0;
  EXPECT_EQ(api.stream_get_priority(context, stream, &priority),
            OPENREG_SUCCESS);
  EXPECT_EQ(api.stream_get_priority(context, stream, nullptr),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(api.device_free(context, 0, ptr), OPENREG_SUCCESS);
  // A layer destroyed with its context alive destroys the context.
}

TEST(ValidationLayerV1Test, WrapsAnAdapted1_0Context) {
  auto library = DriverLibrary::Load(kMinimalV1Path);
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
  EXPECT_THAT(std::string(layer->api().last_error_message(layer->context())),
              HasSubstr("stream_get_priority needs ABI 1.1"));
  layer.reset();
  // The layer destroyed the adapted context: a new one can be created.
  openreg_context context = nullptr;
  ASSERT_EQ((*library)->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  EXPECT_EQ((*library)->api().context_destroy(context), OPENREG_SUCCESS);
}

}  // namespace
}  // namespace openreg
