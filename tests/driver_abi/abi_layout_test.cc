// Keeps the ABI's struct-size constants honest at run time, next to the
// compile-time check in openreg_driver.h.
//
// Released layouts (1.0, 1.1) are frozen: a driver built years ago must
// still find every field where it left it. These numbers are the layout on LP64
// Linux (the only platform openreg builds for); a change to any of them is a
// breaking ABI change, which needs a new major version, not an edit here.
#include <cstddef>

#include "driver_abi/openreg_driver.h"
#include "driver_abi/openreg_driver_v1.h"
#include "gtest/gtest.h"

namespace openreg {
namespace {

TEST(AbiLayoutTest, SizeConstantsEndAtTheirLastField) {
  EXPECT_EQ(OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0,
            offsetof(openreg_driver_config, options) + sizeof(const char*));
  EXPECT_EQ(OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0,
            offsetof(openreg_device_properties, concurrent_streams) +
                sizeof(int32_t));
  EXPECT_EQ(OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0,
            offsetof(openreg_pointer_attributes, size) + sizeof(uint64_t));
  EXPECT_EQ(
      OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0,
      offsetof(openreg_driver_api_v1, device_synchronize) + sizeof(void*));
  EXPECT_EQ(
      OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_1,
      offsetof(openreg_driver_api_v1, stream_get_priority) + sizeof(void*));
}

TEST(AbiLayoutTest, NewestSizeConstantsCoverTheWholeStruct) {
  // What the compile-time check asserts, repeated so a weakened check shows.
  EXPECT_LT(
      sizeof(openreg_driver_config) - OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0,
      alignof(openreg_driver_config));
  EXPECT_LT(sizeof(openreg_device_properties) -
                OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0,
            alignof(openreg_device_properties));
  EXPECT_LT(sizeof(openreg_pointer_attributes) -
                OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0,
            alignof(openreg_pointer_attributes));
  EXPECT_LT(
      sizeof(openreg_driver_api_v1) - OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_1,
      alignof(openreg_driver_api_v1));
}

TEST(AbiLayoutTest, Version1_0SizesAreFrozen) {
  EXPECT_EQ(OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0, 32u);
  EXPECT_EQ(OPENREG_DEVICE_PROPERTIES_STRUCT_SIZE_V1_0, 156u);
  EXPECT_EQ(OPENREG_POINTER_ATTRIBUTES_STRUCT_SIZE_V1_0, 32u);
  // struct_size, two versions, two strings and 26 functions.
  EXPECT_EQ(OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0, 240u);
}

// 1.1 appended one function to the table and changed nothing before it.
TEST(AbiLayoutTest, Version1_1AppendsToTheTableOnly) {
  EXPECT_EQ(offsetof(openreg_driver_api_v1, stream_get_priority),
            OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0);
  EXPECT_EQ(OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_1, 248u);
  EXPECT_EQ(OPENREG_DRIVER_ABI_V1_VERSION_MINOR, 1);
}

TEST(AbiLayoutTest, Version1_0OffsetsAreFrozen) {
  EXPECT_EQ(offsetof(openreg_driver_config, device_count), 8u);
  EXPECT_EQ(offsetof(openreg_driver_config, device_memory_bytes), 16u);
  EXPECT_EQ(offsetof(openreg_driver_config, options), 24u);

  EXPECT_EQ(offsetof(openreg_device_properties, name), 8u);
  EXPECT_EQ(offsetof(openreg_device_properties, total_memory_bytes), 136u);
  EXPECT_EQ(offsetof(openreg_device_properties, least_stream_priority), 144u);
  EXPECT_EQ(offsetof(openreg_device_properties, greatest_stream_priority),
            148u);
  EXPECT_EQ(offsetof(openreg_device_properties, concurrent_streams), 152u);

  EXPECT_EQ(offsetof(openreg_pointer_attributes, memory_type), 8u);
  EXPECT_EQ(offsetof(openreg_pointer_attributes, device), 12u);
  EXPECT_EQ(offsetof(openreg_pointer_attributes, base), 16u);
  EXPECT_EQ(offsetof(openreg_pointer_attributes, size), 24u);

  EXPECT_EQ(offsetof(openreg_driver_api_v1, abi_version_major), 8u);
  EXPECT_EQ(offsetof(openreg_driver_api_v1, abi_version_minor), 12u);
  EXPECT_EQ(offsetof(openreg_driver_api_v1, driver_name), 16u);
  EXPECT_EQ(offsetof(openreg_driver_api_v1, driver_version), 24u);
  // The functions follow in the order of the header, one pointer each.
  EXPECT_EQ(offsetof(openreg_driver_api_v1, init), 32u);
  EXPECT_EQ(offsetof(openreg_driver_api_v1, get_device_count), 56u);
  EXPECT_EQ(offsetof(openreg_driver_api_v1, device_malloc), 72u);
  EXPECT_EQ(offsetof(openreg_driver_api_v1, memcpy_async), 120u);
  EXPECT_EQ(offsetof(openreg_driver_api_v1, stream_create), 136u);
  EXPECT_EQ(offsetof(openreg_driver_api_v1, event_create), 176u);
  EXPECT_EQ(offsetof(openreg_driver_api_v1, launch_host_func), 224u);
  EXPECT_EQ(offsetof(openreg_driver_api_v1, device_synchronize), 232u);
}

// Every major's table starts with the prefix, frozen forever.
TEST(AbiLayoutTest, PrefixIsFrozenAndSharedByEveryMajor) {
  EXPECT_EQ(offsetof(openreg_driver_api_prefix, struct_size), 0u);
  EXPECT_EQ(offsetof(openreg_driver_api_prefix, abi_version_major), 8u);
  EXPECT_EQ(offsetof(openreg_driver_api_prefix, abi_version_minor), 12u);
  EXPECT_EQ(offsetof(openreg_driver_api_prefix, driver_name), 16u);
  EXPECT_EQ(offsetof(openreg_driver_api_prefix, driver_version), 24u);
  EXPECT_EQ(sizeof(openreg_driver_api_prefix), 32u);
  EXPECT_EQ(offsetof(openreg_driver_api, driver_version), 24u);
  EXPECT_EQ(offsetof(openreg_driver_api_v1, driver_version), 24u);
}

// The 2.x table: the prefix, then one pointer per OPENREG_DRIVER_FUNCTIONS
// entry in its order; 2.1 appended one, 2.2 three.
TEST(AbiLayoutTest, Version2TableIsFrozen) {
  size_t expected_offset = sizeof(openreg_driver_api_prefix);
#define CHECK_OFFSET(minor, return_type, name, params)                     \
  EXPECT_EQ(offsetof(openreg_driver_api, name), expected_offset) << #name; \
  expected_offset += sizeof(void*);
  OPENREG_DRIVER_FUNCTIONS(CHECK_OFFSET)
#undef CHECK_OFFSET
  EXPECT_EQ(OPENREG_DRIVER_API_STRUCT_SIZE_V2_2, expected_offset);
  EXPECT_EQ(OPENREG_DRIVER_API_STRUCT_SIZE_V2_0, 248u);
  EXPECT_EQ(OPENREG_DRIVER_API_STRUCT_SIZE_V2_1, 256u);
  EXPECT_EQ(offsetof(openreg_driver_api, device_execution_offset), 248u);
  EXPECT_EQ(OPENREG_DRIVER_API_STRUCT_SIZE_V2_2, 280u);
  EXPECT_EQ(offsetof(openreg_driver_api, activity_enable), 256u);
  EXPECT_EQ(offsetof(openreg_driver_api, activity_get_timestamp), 272u);
  EXPECT_EQ(offsetof(openreg_driver_api, context_create), 32u);
  EXPECT_EQ(offsetof(openreg_driver_api, stream_get_priority), 176u);
  EXPECT_EQ(offsetof(openreg_driver_api, device_synchronize), 240u);
  EXPECT_EQ(sizeof(openreg_driver_api), OPENREG_DRIVER_API_STRUCT_SIZE_V2_2);
  EXPECT_EQ(OPENREG_DRIVER_ABI_VERSION_MAJOR, 2);
  EXPECT_EQ(OPENREG_DRIVER_ABI_VERSION_MINOR, 2);
}

// The activity record of 2.2.
TEST(AbiLayoutTest, ActivityRecordIsFrozen) {
  EXPECT_EQ(offsetof(openreg_activity_record, kind), 8u);
  EXPECT_EQ(offsetof(openreg_activity_record, device), 12u);
  EXPECT_EQ(offsetof(openreg_activity_record, stream), 16u);
  EXPECT_EQ(offsetof(openreg_activity_record, start_ns), 24u);
  EXPECT_EQ(offsetof(openreg_activity_record, end_ns), 32u);
  EXPECT_EQ(offsetof(openreg_activity_record, correlation_id), 40u);
  EXPECT_EQ(offsetof(openreg_activity_record, memcpy_kind), 48u);
  EXPECT_EQ(offsetof(openreg_activity_record, bytes), 56u);
  EXPECT_EQ(OPENREG_ACTIVITY_RECORD_STRUCT_SIZE_V2_2, 64u);
  EXPECT_EQ(OPENREG_ACTIVITY_HOST_FUNCTION, 0);
  EXPECT_EQ(OPENREG_ACTIVITY_EVENT_WAIT, 4);
}

}  // namespace
}  // namespace openreg
