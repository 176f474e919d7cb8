// Device memory, pinned host memory and pointer attributes.
#include <cstring>
#include <vector>

#include "tests/conformance/driver_fixture.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(MemoryTest, InitializedDriverTest);

bool IsAligned(const void* ptr, uintptr_t alignment) {
  return reinterpret_cast<uintptr_t>(ptr) % alignment == 0;
}

TEST_P(MemoryTest, DeviceMallocIsAlignedDistinctAndUsable) {
  std::vector<void*> blocks;
  for (size_t size : {1, 3, 255, 256, 1000, 4096}) {
    void* ptr = DeviceAlloc(1, size);
    ASSERT_NE(ptr, nullptr);
    EXPECT_TRUE(IsAligned(ptr, 256)) << ptr;
    // Usable where the driver's threads reach it.
    std::memset(ExecutionView(1, ptr), 0x11, size);
    for (void* other : blocks) EXPECT_NE(ptr, other);
    blocks.push_back(ptr);
  }
  for (void* ptr : blocks) {
    EXPECT_EQ(api_->device_free(context_, 1, ptr), OPENREG_SUCCESS);
  }
  EXPECT_EQ(FreeBytes(1), kCapacity);
}

TEST_P(MemoryTest, ZeroSizeMallocAndNullFreeAreNoOps) {
  void* ptr = this;
  EXPECT_EQ(api_->device_malloc(context_, 0, 0, &ptr), OPENREG_SUCCESS);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(api_->device_free(context_, 0, nullptr), OPENREG_SUCCESS);
  ptr = this;
  EXPECT_EQ(api_->host_malloc(context_, 0, &ptr), OPENREG_SUCCESS);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(api_->host_free(context_, nullptr), OPENREG_SUCCESS);
  EXPECT_EQ(FreeBytes(0), kCapacity);
}

TEST_P(MemoryTest, CapacityLimitGivesOutOfMemoryUntilMemoryIsFreed) {
  void* too_big = nullptr;
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_OUT_OF_MEMORY,
                api_->device_malloc(context_, 0, kCapacity + 1, &too_big)));
  void* half = DeviceAlloc(0, kCapacity / 2);
  void* rest = DeviceAlloc(0, kCapacity / 2);
  ASSERT_NE(half, nullptr);
  ASSERT_NE(rest, nullptr);
  void* one_more = nullptr;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_OUT_OF_MEMORY,
                        api_->device_malloc(context_, 0, 1, &one_more)));
  // Capacity is per device.
  void* elsewhere = DeviceAlloc(1, 1);
  EXPECT_NE(elsewhere, nullptr);

  EXPECT_EQ(api_->device_free(context_, 0, half), OPENREG_SUCCESS);
  void* again = DeviceAlloc(0, kCapacity / 2);
  EXPECT_NE(again, nullptr);
  EXPECT_EQ(api_->device_free(context_, 0, again), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(context_, 0, rest), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(context_, 1, elsewhere), OPENREG_SUCCESS);
}

TEST_P(MemoryTest, MemGetInfoTracksAllocations) {
  EXPECT_EQ(FreeBytes(2), kCapacity);
  void* a = DeviceAlloc(2, 1000);
  EXPECT_EQ(FreeBytes(2), kCapacity - 1000);
  void* b = DeviceAlloc(2, 24);
  EXPECT_EQ(FreeBytes(2), kCapacity - 1024);
  EXPECT_EQ(FreeBytes(1), kCapacity);
  EXPECT_EQ(api_->device_free(context_, 2, a), OPENREG_SUCCESS);
  EXPECT_EQ(FreeBytes(2), kCapacity - 24);
  EXPECT_EQ(api_->device_free(context_, 2, b), OPENREG_SUCCESS);
  EXPECT_EQ(FreeBytes(2), kCapacity);
}

TEST_P(MemoryTest, DeviceFreeRejectsPointersItDidNotAllocate) {
  int on_stack = 0;
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(context_, 0, &on_stack)));
  char* ptr = static_cast<char*>(DeviceAlloc(0, 512));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(context_, 0, ptr + 16)));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(context_, 1, ptr)));
  EXPECT_EQ(api_->device_free(context_, 0, ptr), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->device_free(context_, 0, ptr)));
  EXPECT_EQ(FreeBytes(0), kCapacity);
}

TEST_P(MemoryTest, PinnedHostMemoryIsTrackedAsHost) {
  void* host = PinnedAlloc(100);
  ASSERT_NE(host, nullptr);
  std::memset(host, 0x22, 100);

  openreg_pointer_attributes attributes = Attributes(host);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_HOST);
  EXPECT_EQ(attributes.device, -1);
  EXPECT_EQ(attributes.base, host);
  EXPECT_EQ(attributes.size, 100u);
  attributes = Attributes(static_cast<char*>(host) + 99);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_HOST);
  EXPECT_EQ(attributes.base, host);

  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->host_free(context_, static_cast<char*>(host) + 8)));
  EXPECT_EQ(api_->host_free(context_, host), OPENREG_SUCCESS);
  EXPECT_EQ(Attributes(host).memory_type, OPENREG_MEMORY_TYPE_UNREGISTERED);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->host_free(context_, host)));
}

TEST_P(MemoryTest, PointerAttributesOfDeviceMemoryIncludingInterior) {
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
  EXPECT_EQ(api_->device_free(context_, 2, ptr), OPENREG_SUCCESS);
  EXPECT_EQ(Attributes(ptr).memory_type, OPENREG_MEMORY_TYPE_UNREGISTERED);
}

TEST_P(MemoryTest, PointerAttributesOfUnknownPointers) {
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

TEST_P(MemoryTest, PointerAttributesHonourStructSize) {
  void* ptr = DeviceAlloc(0, 64);
  openreg_pointer_attributes attributes;
  std::memset(&attributes, 0x5a, sizeof(attributes));
  const openreg_pointer_attributes untouched = attributes;
  attributes.struct_size =
      OPENREG_STRUCT_SIZE(openreg_pointer_attributes, device);
  ASSERT_EQ(api_->pointer_get_attributes(context_, ptr, &attributes),
            OPENREG_SUCCESS);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_DEVICE);
  EXPECT_EQ(attributes.device, 0);
  EXPECT_EQ(attributes.base, untouched.base);
  EXPECT_EQ(attributes.size, untouched.size);

  attributes.struct_size = sizeof(size_t);
  EXPECT_TRUE(
      FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                api_->pointer_get_attributes(context_, ptr, &attributes)));
  EXPECT_EQ(api_->device_free(context_, 0, ptr), OPENREG_SUCCESS);
}

}  // namespace
}  // namespace openreg::conformance
