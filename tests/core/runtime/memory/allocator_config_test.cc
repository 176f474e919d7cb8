#include "core/runtime/memory/allocator_config.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace openreg {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(AllocatorConfigTest, EmptyMeansDefaults) {
  absl::StatusOr<AllocatorConfig> config = ParseAllocatorConfig("");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->has_max_split_size());
  EXPECT_TRUE(config->release_on_oom);
}

TEST(AllocatorConfigTest, ParsesEveryKey) {
  absl::StatusOr<AllocatorConfig> config =
      ParseAllocatorConfig(" max_split_size_mb : 64 ,release_on_oom:false ");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_split_size, size_t{64} << 20);
  EXPECT_FALSE(config->release_on_oom);
}

void ExpectRejected(const std::string& text, const std::string& fragment) {
  absl::StatusOr<AllocatorConfig> config = ParseAllocatorConfig(text);
  ASSERT_FALSE(config.ok()) << text;
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(config.status().message()),
              AllOf(HasSubstr("comma-separated key:value entries"),
                    HasSubstr("max_split_size_mb:<MiB, more than 20>"),
                    HasSubstr("e.g. 'max_split_size_mb:128'"),
                    HasSubstr("entry '" + text + "' is not valid: " + fragment)))
      << text;
}

TEST(AllocatorConfigTest, RejectsBadEntriesWithTheReason) {
  ExpectRejected("max_split_size_mb", "it is not a 'key:value' pair");
  ExpectRejected("max_split_size_mb:1:2", "it is not a 'key:value' pair");
  ExpectRejected("expandable_segments:true",
                 "unknown key 'expandable_segments'");
  const std::string mib = "max_split_size_mb must be an integer number of "
                          "MiB from 21 to ";
  ExpectRejected("max_split_size_mb:20", mib);
  ExpectRejected("max_split_size_mb:-5", mib);
  ExpectRejected("max_split_size_mb:1.5", mib);
  ExpectRejected("release_on_oom:maybe", "release_on_oom must be true or false");
}

}  // namespace
}  // namespace openreg
