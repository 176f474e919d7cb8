// The options both simulated drivers share, as sim::ParseConfig reads them:
// retain_freed_memory (Note [Retained execution pages]) in every accepted
// form and every error, which names the option and says what is expected;
// the driver's own keys pass through.
#include <string>

#include "driver_abi/openreg_driver.h"
#include "gtest/gtest.h"
#include "plugins/sim_support/config.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {
namespace {

std::string LastError() { return LastErrorMessage("sim_config_test"); }

openreg_status Parse(const char* options, SimConfig* out) {
  openreg_driver_config config{};
  config.struct_size = sizeof(config);
  config.options = options;
  return ParseConfig(&config, out);
}

TEST(SimConfigTest, RetainFreedMemoryDefaultsToTheDocumentedBound) {
  SimConfig config;
  ASSERT_EQ(Parse("", &config), OPENREG_SUCCESS);
  EXPECT_EQ(config.retain_freed_bytes, kDefaultRetainFreedBytes);
  EXPECT_EQ(kDefaultRetainFreedBytes, uint64_t{64} << 20);
}

TEST(SimConfigTest, RetainFreedMemoryTakesBytesOrAUnit) {
  const struct {
    const char* options;
    uint64_t bytes;
  } cases[] = {
      {"retain_freed_memory=0", 0},
      {"retain_freed_memory=4096", 4096},
      {"retain_freed_memory=8KiB", 8 << 10},
      {" retain_freed_memory = 3MiB ", uint64_t{3} << 20},
      {"retain_freed_memory=2GiB", uint64_t{2} << 30},
      {"retain_freed_memory=17179869183GiB", uint64_t{17179869183} << 30},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.options);
    SimConfig config;
    ASSERT_EQ(Parse(c.options, &config), OPENREG_SUCCESS) << LastError();
    EXPECT_EQ(config.retain_freed_bytes, c.bytes);
    EXPECT_EQ(config.options, "");
  }
}

TEST(SimConfigTest, TheDriversOwnKeysPassThrough) {
  SimConfig config;
  ASSERT_EQ(Parse("queue_depth=4,retain_freed_memory=1MiB,fault_points="
                  "device_malloc,fault_rate=0,adversarial=1",
                  &config),
            OPENREG_SUCCESS)
      << LastError();
  EXPECT_EQ(config.retain_freed_bytes, uint64_t{1} << 20);
  EXPECT_EQ(config.options, "queue_depth=4,adversarial=1");
}

TEST(SimConfigTest, BadRetainFreedMemorySaysWhatIsExpected) {
  const char* const bad_values[] = {
      "retain_freed_memory",
      "retain_freed_memory=",
      "retain_freed_memory=-1",
      "retain_freed_memory=lots",
      "retain_freed_memory=64MB",
      "retain_freed_memory=1.5GiB",
      "retain_freed_memory=MiB",
      "retain_freed_memory=18446744073709551616",
      "retain_freed_memory=17179869184GiB",
  };
  for (const char* options : bad_values) {
    SCOPED_TRACE(options);
    SimConfig config;
    EXPECT_EQ(Parse(options, &config), OPENREG_ERROR_INVALID_ARGUMENT);
    const std::string message = LastError();
    EXPECT_NE(message.find("retain_freed_memory=\""), std::string::npos)
        << message;
    EXPECT_NE(message.find("optionally with a unit KiB, MiB or GiB"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find(options), std::string::npos) << message;
  }
}

TEST(SimConfigTest, RepeatedRetainFreedMemoryIsAnError) {
  SimConfig config;
  EXPECT_EQ(Parse("retain_freed_memory=1,retain_freed_memory=2", &config),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("appears more than once"), std::string::npos)
      << LastError();
}

}  // namespace
}  // namespace openreg::sim
