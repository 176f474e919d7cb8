// Device memory the host cannot touch (ABI 2.1, device_execution_offset): a
// driver that reports a non-zero offset promises that the address
// device_malloc returned faults on host access, as on hardware, while the
// same bytes are readable and writable at address + offset, where copies,
// memsets and host functions see them. A driver without the function (or
// reporting 0) keeps device memory host-accessible at its address. Pinned
// host memory is host memory either way.
#include <cstring>
#include <vector>

#include "tests/conformance/driver_fixture.h"
#include "tests/conformance/host_read_fault.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(DeviceViewTest, InitializedDriverTest);

TEST_P(DeviceViewTest, OffsetIsConstantPerDeviceAndArgumentsAreChecked) {
  if (!HasExecutionOffset()) {
    GTEST_SKIP() << "the driver does not implement the optional 2.1 "
                    "device_execution_offset; its device memory is "
                    "host-accessible at its address";
  }
  for (int32_t device = 0; device < kDeviceCount; ++device) {
    const intptr_t first = ExecutionOffset(device);
    EXPECT_EQ(ExecutionOffset(device), first) << "device " << device;
  }
  intptr_t offset = 0;
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_DEVICE,
      api_->device_execution_offset(context_, kDeviceCount, &offset)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_DEVICE,
                        api_->device_execution_offset(context_, -1, &offset)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_execution_offset(context_, 0, nullptr)));
}

TEST_P(DeviceViewTest, HostReadOfADeviceAddressFaults) {
  if (ExecutionOffset(0) == 0) {
    GTEST_SKIP() << "the driver reports execution offset 0: its device "
                    "memory is host-accessible at its address";
  }
  void* device = DeviceAlloc(0, 4096);
  ASSERT_NE(device, nullptr);
  ExpectHostReadFaults(device);
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
}

TEST_P(DeviceViewTest, ExecutionViewHoldsTheBytesCopiesMove) {
  constexpr size_t kSize = 8192;
  openreg_stream stream = NewStream(1);
  unsigned char* device = static_cast<unsigned char*>(DeviceAlloc(1, kSize));
  ASSERT_NE(device, nullptr);
  unsigned char* execution = ExecutionView(1, device);
  const std::vector<unsigned char> sent = Pattern(kSize, 7);
  // Copied in by the driver, read through the execution view.
  ASSERT_EQ(api_->memcpy_async(context_, device, sent.data(), kSize,
                               OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(0, std::memcmp(execution, sent.data(), kSize));
  // Written through the execution view (as a host function would), copied
  // out by the driver; a memset lands there too.
  std::memset(execution + 100, 0xAB, 50);
  ASSERT_EQ(api_->memset_async(context_, device + 1000, 0xCD, 10, stream),
            OPENREG_SUCCESS);
  std::vector<unsigned char> received(kSize);
  ASSERT_EQ(api_->memcpy_async(context_, received.data(), device, kSize,
                               OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  std::vector<unsigned char> expected = sent;
  std::memset(expected.data() + 100, 0xAB, 50);
  std::memset(expected.data() + 1000, 0xCD, 10);
  EXPECT_EQ(received, expected);
  EXPECT_EQ(execution[1005], 0xCD);
  EXPECT_EQ(api_->device_free(context_, 1, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

// A driver may keep the execution pages of freed memory mapped to reuse them
// (the simulated drivers do, Note [Retained execution pages]); memory
// allocated again after a free must still fault at its device address and
// hold what copies move at its execution address. Its contents before that
// are unspecified: the ABI promises nothing about new device memory.
TEST_P(DeviceViewTest, ReallocatedMemoryKeepsBothViews) {
  if (ExecutionOffset(0) == 0) {
    GTEST_SKIP() << "the driver reports execution offset 0: its device "
                    "memory is host-accessible at its address";
  }
  constexpr size_t kSize = 4096;
  openreg_stream stream = NewStream(0);
  void* first = DeviceAlloc(0, kSize);
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(api_->memset_async(context_, first, 0x3C, kSize, stream),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  ASSERT_EQ(api_->device_free(context_, 0, first), OPENREG_SUCCESS);
  unsigned char* device = static_cast<unsigned char*>(DeviceAlloc(0, kSize));
  ASSERT_NE(device, nullptr);
  const std::vector<unsigned char> sent = Pattern(kSize, 11);
  ASSERT_EQ(api_->memcpy_async(context_, device, sent.data(), kSize,
                               OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
            OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(0, std::memcmp(ExecutionView(0, device), sent.data(), kSize));
  ExpectHostReadFaults(device);
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
}

TEST_P(DeviceViewTest, PointerAttributesDescribeTheDeviceAddress) {
  char* device = static_cast<char*>(DeviceAlloc(0, 1000));
  ASSERT_NE(device, nullptr);
  const openreg_pointer_attributes inside = Attributes(device + 10);
  EXPECT_EQ(inside.memory_type, OPENREG_MEMORY_TYPE_DEVICE);
  EXPECT_EQ(inside.base, device);
  EXPECT_EQ(inside.size, 1000u);
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
}

TEST_P(DeviceViewTest, PinnedHostMemoryIsHostAccessible) {
  constexpr size_t kSize = 4096;
  unsigned char* pinned = static_cast<unsigned char*>(PinnedAlloc(kSize));
  ASSERT_NE(pinned, nullptr);
  std::memset(pinned, 0x5A, kSize);
  EXPECT_EQ(pinned[kSize - 1], 0x5A);
  EXPECT_EQ(api_->host_free(context_, pinned), OPENREG_SUCCESS);
}

}  // namespace
}  // namespace openreg::conformance
