// Tests parsing of the OPENREG_* environment variables: ParseByteSize and
// RuntimeConfigFromEnvironment with a fake environment.
#include "core/runtime/runtime_config.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace openreg {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kTiB = uint64_t{1} << 40;

// --- ParseByteSize -------------------------------------------------------------

void ExpectSize(const char* text, uint64_t expected) {
  absl::StatusOr<uint64_t> parsed = ParseByteSize(text);
  ASSERT_TRUE(parsed.ok()) << "'" << text << "': " << parsed.status();
  EXPECT_EQ(*parsed, expected) << "'" << text << "'";
}

TEST(ParseByteSizeTest, PlainBytes) {
  ExpectSize("0", 0);
  ExpectSize("1", 1);
  ExpectSize("1048576", kMiB);
  ExpectSize("42B", 42);
  ExpectSize("42b", 42);
  ExpectSize("18446744073709551615", UINT64_MAX);
}

TEST(ParseByteSizeTest, BinarySuffixes) {
  ExpectSize("1KiB", kKiB);
  ExpectSize("512MiB", 512 * kMiB);
  ExpectSize("2GiB", 2 * kGiB);
  ExpectSize("3TiB", 3 * kTiB);
}

TEST(ParseByteSizeTest, DecimalSuffixes) {
  ExpectSize("1KB", 1000);
  ExpectSize("5MB", 5'000'000);
  ExpectSize("2GB", 2'000'000'000);
  ExpectSize("1TB", 1'000'000'000'000);
}

TEST(ParseByteSizeTest, SuffixesAreCaseInsensitive) {
  ExpectSize("1kib", kKiB);
  ExpectSize("1KIB", kKiB);
  ExpectSize("512mib", 512 * kMiB);
  ExpectSize("2gIb", 2 * kGiB);
  ExpectSize("1Tib", kTiB);
  ExpectSize("1kb", 1000);
  ExpectSize("1Mb", 1'000'000);
  ExpectSize("1gB", 1'000'000'000);
}

TEST(ParseByteSizeTest, Fractions) {
  ExpectSize("1.5GiB", kGiB + kGiB / 2);
  ExpectSize("0.5KiB", 512);
  ExpectSize("2.5MB", 2'500'000);
  ExpectSize("0.25TiB", kTiB / 4);
}

TEST(ParseByteSizeTest, Whitespace) {
  ExpectSize(" 1024 ", 1024);
  ExpectSize("64 MiB", 64 * kMiB);
  ExpectSize("\t2GiB\n", 2 * kGiB);
  ExpectSize("  1.5 GiB  ", kGiB + kGiB / 2);
}

void ExpectInvalidSize(const char* text) {
  absl::StatusOr<uint64_t> parsed = ParseByteSize(text);
  ASSERT_FALSE(parsed.ok()) << "'" << text << "' parsed as " << *parsed;
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
      << "'" << text << "': " << parsed.status();
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr(absl::StrCat("'", text, "' is not a size")));
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("GiB"));
}

TEST(ParseByteSizeTest, InvalidStrings) {
  for (const char* text :
       {"", " ", "B", "GiB", "lots", "twelve MiB", "12XB", "12 PiB", "1.2.3",
        "1 2", "MiB12", "12MiBs", "1,024", "nan", "inf", "infGiB", ".",
        "1e3", "0x10", "0x10GiB", "1.", ".5GiB"}) {
    SCOPED_TRACE(text);
    ExpectInvalidSize(text);
  }
}

TEST(ParseByteSizeTest, NegativeSizes) {
  for (const char* text : {"-1", "-1MiB", "-0.5GiB", "- 1"}) {
    SCOPED_TRACE(text);
    ExpectInvalidSize(text);
  }
}

TEST(ParseByteSizeTest, Overflow) {
  // Still fits: 2^64 - 2^40.
  ExpectSize("16777215TiB", UINT64_MAX - kTiB + 1);
  // Integer count times unit past 2^64 - 1.
  for (const char* text : {"16777216TiB", "17179869184GiB", "18446745TB"}) {
    SCOPED_TRACE(text);
    absl::StatusOr<uint64_t> parsed = ParseByteSize(text);
    ASSERT_FALSE(parsed.ok()) << *parsed;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(std::string(parsed.status().message()),
                HasSubstr(absl::StrCat("'", text, "' overflows 64 bits")));
  }
  // Too large to read as an integer, or as a fraction: also out of range.
  for (const char* text :
       {"18446744073709551616", "99999999999999999999999", "16777216.5TiB"}) {
    SCOPED_TRACE(text);
    absl::StatusOr<uint64_t> parsed = ParseByteSize(text);
    ASSERT_FALSE(parsed.ok()) << *parsed;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kOutOfRange);
  }
}

// --- RuntimeConfigFromEnvironment ---------------------------------------------

// A fake environment that also records which variables were asked for.
class FakeEnvironment {
 public:
  explicit FakeEnvironment(std::map<std::string, std::string> variables = {})
      : variables_(std::move(variables)) {}

  EnvironmentLookup lookup() {
    return [this](const char* name) -> std::optional<std::string> {
      queried_.insert(name);
      auto it = variables_.find(name);
      if (it == variables_.end()) return std::nullopt;
      return it->second;
    };
  }

  const std::set<std::string>& queried() const { return queried_; }

 private:
  std::map<std::string, std::string> variables_;
  std::set<std::string> queried_;
};

absl::StatusOr<RuntimeConfig> ConfigFrom(
    std::map<std::string, std::string> variables) {
  FakeEnvironment environment(std::move(variables));
  return RuntimeConfigFromEnvironment(environment.lookup());
}

TEST(RuntimeConfigTest, Defaults) {
  FakeEnvironment environment;
  absl::StatusOr<RuntimeConfig> config =
      RuntimeConfigFromEnvironment(environment.lookup());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->driver_spec, "");
  EXPECT_THAT(config->extra_driver_dirs, IsEmpty());
  EXPECT_EQ(config->device_count, kDefaultDeviceCount);
  EXPECT_EQ(config->device_memory_bytes, 0u);
  EXPECT_EQ(config->driver_options, "");
  EXPECT_THAT(environment.queried(),
              UnorderedElementsAre(
                  "OPENREG_DRIVER", "OPENREG_DRIVER_PATH",
                  "OPENREG_DEVICE_COUNT", "OPENREG_DEVICE_MEMORY",
                  "OPENREG_DRIVER_OPTIONS", "OPENREG_ALLOC_CONF",
                  "OPENREG_DRIVER_VALIDATION", "OPENREG_LAUNCH_BLOCKING"));
  EXPECT_FALSE(config->allocator.has_max_split_size());
  EXPECT_FALSE(config->driver_validation);
  EXPECT_FALSE(config->launch_blocking);
}

TEST(RuntimeConfigTest, Driver) {
  absl::StatusOr<RuntimeConfig> config =
      ConfigFrom({{"OPENREG_DRIVER", "cpu_sim"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->driver_spec, "cpu_sim");

  config = ConfigFrom({{"OPENREG_DRIVER", "  /opt/libopenreg_x.so\n"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->driver_spec, "/opt/libopenreg_x.so");

  config = ConfigFrom({{"OPENREG_DRIVER", ""}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->driver_spec, "");
}

TEST(RuntimeConfigTest, DriverPath) {
  absl::StatusOr<RuntimeConfig> config =
      ConfigFrom({{"OPENREG_DRIVER_PATH", "/opt/drivers"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->extra_driver_dirs, ElementsAre("/opt/drivers"));

  // Order is kept; empty entries are skipped.
  config = ConfigFrom({{"OPENREG_DRIVER_PATH", ":/b::/a/x:"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->extra_driver_dirs, ElementsAre("/b", "/a/x"));

  config = ConfigFrom({{"OPENREG_DRIVER_PATH", ""}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->extra_driver_dirs, IsEmpty());
}

TEST(RuntimeConfigTest, DeviceCount) {
  for (int32_t count : {1, 3, kMaxDeviceCount}) {
    SCOPED_TRACE(count);
    absl::StatusOr<RuntimeConfig> config =
        ConfigFrom({{"OPENREG_DEVICE_COUNT", absl::StrCat(count)}});
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->device_count, count);
  }
}

TEST(RuntimeConfigTest, DeviceMemory) {
  absl::StatusOr<RuntimeConfig> config =
      ConfigFrom({{"OPENREG_DEVICE_MEMORY", "512MiB"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->device_memory_bytes, 512 * kMiB);

  config = ConfigFrom({{"OPENREG_DEVICE_MEMORY", "4096"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->device_memory_bytes, 4096u);
}

TEST(RuntimeConfigTest, AllVariablesTogether) {
  absl::StatusOr<RuntimeConfig> config =
      ConfigFrom({{"OPENREG_DRIVER", "fake"},
                  {"OPENREG_DRIVER_PATH", "/x:/y"},
                  {"OPENREG_DEVICE_COUNT", "4"},
                  {"OPENREG_DEVICE_MEMORY", "1.5GiB"},
                  {"OPENREG_DRIVER_OPTIONS", " adversarial=1,seed=3 "},
                  {"OPENREG_ALLOC_CONF", "max_split_size_mb:64"},
                  {"UNRELATED", "ignored"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->driver_spec, "fake");
  EXPECT_THAT(config->extra_driver_dirs, ElementsAre("/x", "/y"));
  EXPECT_EQ(config->device_count, 4);
  EXPECT_EQ(config->device_memory_bytes, kGiB + kGiB / 2);
  EXPECT_EQ(config->driver_options, "adversarial=1,seed=3");
  EXPECT_EQ(config->allocator.max_split_size, size_t{64} << 20);
}

// The message names the variable, quotes the bad value and says what is
// expected.
void ExpectInvalidVariable(const std::string& name, const std::string& value,
                           const std::string& expected) {
  SCOPED_TRACE(absl::StrCat(name, "=", value));
  absl::StatusOr<RuntimeConfig> config = ConfigFrom({{name, value}});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument)
      << config.status();
  const std::string message(config.status().message());
  EXPECT_THAT(message, HasSubstr(absl::StrCat(name, "='", value, "'")));
  EXPECT_THAT(message, HasSubstr(absl::StrCat("expected ", expected)));
  EXPECT_THAT(message, HasSubstr(absl::StrCat("Fix or unset ", name)));
}

TEST(RuntimeConfigTest, InvalidDeviceCount) {
  const std::string expected =
      absl::StrCat("an integer from 1 to ", kMaxDeviceCount);
  for (const char* value : {"0", "65", "two", "-1", "", "2.5", "3 devices",
                            "99999999999999999999"}) {
    ExpectInvalidVariable("OPENREG_DEVICE_COUNT", value, expected);
  }
}

TEST(RuntimeConfigTest, InvalidDeviceMemory) {
  for (const char* value : {"0", "0GiB", "lots", "-1GiB", "", "16777216TiB"}) {
    ExpectInvalidVariable("OPENREG_DEVICE_MEMORY", value, "a positive size");
  }
}

TEST(RuntimeConfigTest, InvalidDriverPath) {
  for (const char* value :
       {"relative/dir", "/ok:relative/dir", "/ok:./here", "~/drivers"}) {
    ExpectInvalidVariable("OPENREG_DRIVER_PATH", value,
                          "a ':'-separated list of absolute directories");
  }
}

TEST(RuntimeConfigTest, InvalidAllocatorConfig) {
  for (const char* value : {"max_split_size_mb:4", "garbage", "caching:off"}) {
    ExpectInvalidVariable("OPENREG_ALLOC_CONF", value,
                          "comma-separated key:value entries");
  }
}

TEST(RuntimeConfigTest, ReadsTheProcessEnvironmentByDefault) {
  ASSERT_EQ(setenv("OPENREG_DEVICE_COUNT", "5", /*overwrite=*/1), 0);
  ASSERT_EQ(unsetenv("OPENREG_DEVICE_MEMORY"), 0);
  EXPECT_EQ(GetEnvironmentVariable("OPENREG_DEVICE_COUNT"), "5");
  EXPECT_EQ(GetEnvironmentVariable("OPENREG_DEVICE_MEMORY"), std::nullopt);
  absl::StatusOr<RuntimeConfig> config = RuntimeConfigFromEnvironment();
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->device_count, 5);
  EXPECT_EQ(config->device_memory_bytes, 0u);
  ASSERT_EQ(unsetenv("OPENREG_DEVICE_COUNT"), 0);
}

TEST(RuntimeConfigTest, DriverValidation) {
  for (const auto& [value, expected] :
       std::map<std::string, bool>{{"1", true}, {" 1\n", true}, {"0", false},
                                   {"", false}}) {
    absl::StatusOr<RuntimeConfig> config =
        ConfigFrom({{"OPENREG_DRIVER_VALIDATION", value}});
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->driver_validation, expected) << value;
  }
  for (const char* bad : {"yes", "2", "true"}) {
    ExpectInvalidVariable("OPENREG_DRIVER_VALIDATION", bad,
                          "0 (off, the default) or 1");
  }
}

TEST(RuntimeConfigTest, LaunchBlocking) {
  for (const auto& [value, expected] : std::map<std::string, bool>{
           {"1", true}, {" 1\n", true}, {"0", false}, {"", false}}) {
    absl::StatusOr<RuntimeConfig> config =
        ConfigFrom({{"OPENREG_LAUNCH_BLOCKING", value}});
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->launch_blocking, expected) << value;
  }
  for (const char* bad : {"yes", "2", "true", "on"}) {
    ExpectInvalidVariable("OPENREG_LAUNCH_BLOCKING", bad,
                          "0 (off, the default: failures of enqueued work "
                          "surface at the next synchronization) or 1");
  }
}

}  // namespace
}  // namespace openreg
