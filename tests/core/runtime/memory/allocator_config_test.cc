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
              AllOf(HasSubstr("OPENREG_ALLOC_CONF"), HasSubstr(fragment),
                    HasSubstr("accepted keys: max_split_size_mb"),
                    HasSubstr("e.g. OPENREG_ALLOC_CONF=")))
      << text;
}

TEST(AllocatorConfigTest, RejectsBadEntriesWithTheReason) {
  ExpectRejected("max_split_size_mb", "a 'key:value' pair");
  ExpectRejected("max_split_size_mb:1:2", "a 'key:value' pair");
  ExpectRejected("expandable_segments:true", "a known key, found 'expandable_segments'");
  ExpectRejected("max_split_size_mb:20", "an integer number of MiB from 21");
  ExpectRejected("max_split_size_mb:-5", "an integer number of MiB from 21");
  ExpectRejected("max_split_size_mb:1.5", "an integer number of MiB from 21");
  ExpectRejected("release_on_oom:maybe", "release_on_oom to be true or false");
}

}  // namespace
}  // namespace openreg
