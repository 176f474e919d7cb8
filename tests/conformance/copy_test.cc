// memcpy_async and memset_async: every direction, pinned and pageable host
// memory, and the arguments they reject.
#include <cstring>
#include <vector>

#include "tests/conformance/driver_fixture.h"
#include "tests/conformance/gate.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(CopyTest, InitializedDriverTest);

TEST_P(CopyTest, CopiesOfEveryKindMoveTheData) {
  constexpr size_t kSize = 3000;
  openreg_stream stream = NewStream(0);
  void* device0 = DeviceAlloc(0, kSize);
  void* device1 = DeviceAlloc(1, kSize);
  void* pinned_in = PinnedAlloc(kSize);
  void* pinned_out = PinnedAlloc(kSize);
  const std::vector<unsigned char> source = Pattern(kSize, 3);

  ASSERT_EQ(api_->memcpy_async(context_, pinned_in, source.data(), kSize,
                               OPENREG_MEMCPY_HOST_TO_HOST, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->memcpy_async(context_, device0, pinned_in, kSize,
                               OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  // Device pointers may belong to any device, whatever the stream's device.
  ASSERT_EQ(api_->memcpy_async(context_, device1, device0, kSize,
                               OPENREG_MEMCPY_DEVICE_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->memcpy_async(context_, pinned_out, device1, kSize,
                               OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(0, std::memcmp(pinned_out, source.data(), kSize));

  // Interior pointers and partial ranges, within one allocation.
  ASSERT_EQ(api_->memcpy_async(context_, static_cast<char*>(device0) + 100,
                               static_cast<char*>(device0) + 10, 50,
                               OPENREG_MEMCPY_DEVICE_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->memcpy_async(context_, pinned_out, device0, kSize,
                               OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  const auto* result = static_cast<const unsigned char*>(pinned_out);
  EXPECT_EQ(0, std::memcmp(result + 100, source.data() + 10, 50));
  EXPECT_EQ(0, std::memcmp(result, source.data(), 100));
  EXPECT_EQ(0, std::memcmp(result + 150, source.data() + 150, kSize - 150));

  EXPECT_EQ(api_->host_free(context_, pinned_in), OPENREG_SUCCESS);
  EXPECT_EQ(api_->host_free(context_, pinned_out), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(context_, 0, device0), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(context_, 1, device1), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

// The core frees or reuses pageable source memory as soon as the copy call
// returns (as CUDA allows), so the driver must have taken the bytes by then.
TEST_P(CopyTest, PageableSourceMayBeReusedWhenTheCallReturns) {
  constexpr size_t kSize = 4096;
  openreg_stream stream = NewStream(0);
  void* device = DeviceAlloc(0, kSize);
  void* pinned = PinnedAlloc(kSize);
  const std::vector<unsigned char> expected = Pattern(kSize, 11);
  std::vector<unsigned char> pageable = expected;
  // Holding the stream makes an asynchronous driver queue the copies.
  Gate gate;
  ASSERT_EQ(gate.Launch(api_, context_, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->memcpy_async(context_, device, pageable.data(), kSize,
                               OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  std::vector<unsigned char> pageable_for_host = expected;
  ASSERT_EQ(api_->memcpy_async(context_, pinned, pageable_for_host.data(),
                               kSize, OPENREG_MEMCPY_HOST_TO_HOST, stream),
            OPENREG_SUCCESS);
  std::fill(pageable.begin(), pageable.end(), 0);
  pageable_for_host.assign(kSize, 0);
  pageable_for_host.shrink_to_fit();
  gate.Open();
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(0, std::memcmp(ExecutionView(0, device), expected.data(), kSize));
  EXPECT_EQ(0, std::memcmp(pinned, expected.data(), kSize));
  EXPECT_EQ(api_->host_free(context_, pinned), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

// A copy into pageable memory has finished, after all earlier work on its
// stream, when the call returns (as on CUDA): no synchronize needed.
TEST_P(CopyTest, CopyIntoPageableMemoryIsCompleteWhenTheCallReturns) {
  constexpr size_t kSize = 2048;
  openreg_stream stream = NewStream(1);
  char* device = static_cast<char*>(DeviceAlloc(1, kSize));
  const std::vector<unsigned char> source = Pattern(kSize, 5);
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(round);
    const unsigned char fill = static_cast<unsigned char>(round + 1);
    ASSERT_EQ(api_->memcpy_async(context_, device, source.data(), kSize,
                                 OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
              OPENREG_SUCCESS);
    ASSERT_EQ(api_->memset_async(context_, device + 100, fill, 50, stream),
              OPENREG_SUCCESS);
    std::vector<unsigned char> result(kSize, 0);
    ASSERT_EQ(api_->memcpy_async(context_, result.data(), device, kSize,
                                 OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
              OPENREG_SUCCESS);
    std::vector<unsigned char> expected = source;
    std::fill(expected.begin() + 100, expected.begin() + 150, fill);
    ASSERT_EQ(result, expected);
    std::vector<unsigned char> host_copy(kSize, 0);
    ASSERT_EQ(api_->memcpy_async(context_, host_copy.data(), source.data(),
                                 kSize, OPENREG_MEMCPY_HOST_TO_HOST, stream),
              OPENREG_SUCCESS);
    ASSERT_EQ(host_copy, source);
  }
  EXPECT_EQ(api_->device_free(context_, 1, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(CopyTest, ZeroByteCopyAndMemsetNeedNoPointers) {
  openreg_stream stream = NewStream(0);
  EXPECT_EQ(api_->memcpy_async(context_, nullptr, nullptr, 0,
                               OPENREG_MEMCPY_DEVICE_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  EXPECT_EQ(api_->memset_async(context_, nullptr, 0, 0, stream),
            OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(CopyTest, InvalidCopiesAreRejectedWithoutTouchingMemory) {
  openreg_stream stream = NewStream(0);
  char* device = static_cast<char*>(DeviceAlloc(0, 1024));
  std::vector<unsigned char> host(2048, 0x33);

  for (int32_t kind : {-1, 4}) {
    EXPECT_TRUE(FailsWith(
        OPENREG_ERROR_INVALID_ARGUMENT,
        api_->memcpy_async(context_, device, host.data(), 16, kind, stream)));
  }
  // Host memory where device memory is required, both directions.
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->memcpy_async(context_, host.data(), host.data() + 1024,
                                   16, OPENREG_MEMCPY_HOST_TO_DEVICE, stream)));
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->memcpy_async(context_, host.data(), host.data() + 1024,
                                   16, OPENREG_MEMCPY_DEVICE_TO_HOST, stream)));
  // Past the end of the device allocation.
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->memcpy_async(context_, host.data(), device + 1000, 100,
                                   OPENREG_MEMCPY_DEVICE_TO_HOST, stream)));
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->memcpy_async(context_, device, host.data(), 2048,
                                   OPENREG_MEMCPY_HOST_TO_DEVICE, stream)));
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->memcpy_async(context_, device, nullptr, 16,
                                   OPENREG_MEMCPY_HOST_TO_DEVICE, stream)));
  // A freed allocation no longer counts as device memory.
  char* freed = static_cast<char*>(DeviceAlloc(0, 64));
  ASSERT_EQ(api_->device_free(context_, 0, freed), OPENREG_SUCCESS);
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->memcpy_async(context_, freed, device, 16,
                                   OPENREG_MEMCPY_DEVICE_TO_DEVICE, stream)));
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->memcpy_async(context_, host.data(), host.data() + 1024,
                                   16, OPENREG_MEMCPY_HOST_TO_HOST, nullptr)));
  // Rejected at the call: nothing was queued, nothing written.
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  for (unsigned char byte : host) ASSERT_EQ(byte, 0x33);

  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->memcpy_async(context_, host.data(), host.data() + 1024,
                                   16, OPENREG_MEMCPY_HOST_TO_HOST, stream)));
}

TEST_P(CopyTest, MemsetWritesTheLowByteOfValue) {
  openreg_stream stream = NewStream(1);
  char* device = static_cast<char*>(DeviceAlloc(1, 512));
  ASSERT_EQ(api_->memset_async(context_, device, 0, 512, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->memset_async(context_, device + 100, 0x1ab, 300, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  const char* bytes = ExecutionView(1, device);
  for (size_t i = 0; i < 512; ++i) {
    const unsigned char expected = (i >= 100 && i < 400) ? 0xab : 0;
    ASSERT_EQ(static_cast<unsigned char>(bytes[i]), expected) << "byte " << i;
  }

  std::vector<unsigned char> host(64, 0x44);
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->memset_async(context_, host.data(), 0, 64, stream)));
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->memset_async(context_, device + 500, 0, 13, stream)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->memset_async(context_, device, 0, 4, nullptr)));
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  for (unsigned char byte : host) ASSERT_EQ(byte, 0x44);
  EXPECT_EQ(api_->device_free(context_, 1, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

}  // namespace
}  // namespace openreg::conformance
