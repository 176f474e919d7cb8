// Finding driver libraries (core/driver/driver_paths.h): the search-path
// rules of ResolveDriverPath and ListAvailableDrivers, on fake files in
// temporary directories and on the real cpu_sim driver, checking both the
// status code and that the message says what is wrong and how to fix it.
#include "core/driver/driver_paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

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

// Relative to the runfiles root, the working directory of a Bazel test.
constexpr char kCpuSimDir[] = "plugins/cpu_sim";
constexpr char kCpuSimPath[] = "plugins/cpu_sim/libopenreg_cpu_sim.so";

// The absolute form of a runfiles-relative path.
std::string Absolute(const std::string& relative) {
  return std::filesystem::absolute(relative).lexically_normal().string();
}

// A fresh directory under the test's private temporary directory, removed
// again when the test ends.
class TempDir {
 public:
  TempDir() {
    const char* root = std::getenv("TEST_TMPDIR");
    std::string pattern = absl::StrCat(
        root != nullptr && root[0] != '\0' ? root : "/tmp",
        "/driver_paths_test.XXXXXX");
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  // Creates an empty (fake) file and returns its path.
  std::string Touch(const std::string& name) const {
    const std::string file = absl::StrCat(path_, "/", name);
    std::ofstream(file) << "fake\n";
    return file;
  }

 private:
  std::string path_;
};

// Asserts the status code and that the message contains every fragment.
void ExpectError(const absl::Status& status, absl::StatusCode code,
                 std::initializer_list<std::string> fragments) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& fragment : fragments) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(fragment));
  }
}

// --- Names ------------------------------------------------------------------

TEST(DriverFileNameTest, WrapsNameInPrefixAndSuffix) {
  EXPECT_EQ(DriverFileName("cpu_sim"), "libopenreg_cpu_sim.so");
  EXPECT_EQ(DriverFileName("x"), "libopenreg_x.so");
  EXPECT_EQ(kDefaultDriverName, "cpu_sim");
}

// --- ListAvailableDrivers -----------------------------------------------------

TEST(ListAvailableDriversTest, SortedDeduplicatedAndIgnoresOtherFiles) {
  TempDir first;
  TempDir second;
  ASSERT_FALSE(first.path().empty());
  ASSERT_FALSE(second.path().empty());
  first.Touch("libopenreg_zeta.so");
  first.Touch("libopenreg_alpha.so");
  second.Touch("libopenreg_alpha.so");  // duplicate across directories
  second.Touch("libopenreg_mid.so");
  // None of these is a driver file name.
  first.Touch("libopenreg_.so");       // empty name
  first.Touch("libopenreg_x.so.1");    // versioned, not .so
  first.Touch("libopenreg_y.txt");
  first.Touch("libother.so");
  first.Touch("openreg_z.so");
  first.Touch("README");
  second.Touch("libopenreg_w.so.bak");

  EXPECT_THAT(ListAvailableDrivers({first.path(), second.path()}),
              ElementsAre("alpha", "mid", "zeta"));
  // Order of the directories does not change the (sorted) result.
  EXPECT_THAT(ListAvailableDrivers({second.path(), first.path()}),
              ElementsAre("alpha", "mid", "zeta"));
}

TEST(ListAvailableDriversTest, MissingAndEmptyDirectoriesGiveNothing) {
  TempDir empty;
  ASSERT_FALSE(empty.path().empty());
  EXPECT_THAT(ListAvailableDrivers({}), IsEmpty());
  EXPECT_THAT(ListAvailableDrivers({empty.path()}), IsEmpty());
  EXPECT_THAT(
      ListAvailableDrivers({absl::StrCat(empty.path(), "/does_not_exist")}),
      IsEmpty());
}

TEST(ListAvailableDriversTest, FindsTheShippedDriver) {
  EXPECT_THAT(ListAvailableDrivers({Absolute(kCpuSimDir)}),
              ElementsAre("cpu_sim"));
}

// --- ResolveDriverPath --------------------------------------------------------

TEST(ResolveDriverPathTest, EmptySpecMeansCpuSim) {
  const std::string dir = Absolute(kCpuSimDir);
  absl::StatusOr<std::string> path = ResolveDriverPath("", {dir});
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, absl::StrCat(dir, "/libopenreg_cpu_sim.so"));
}

TEST(ResolveDriverPathTest, EmptySpecUsesCpuSimFromTheSearchDirs) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string fake = dir.Touch("libopenreg_cpu_sim.so");
  dir.Touch("libopenreg_other.so");
  absl::StatusOr<std::string> path = ResolveDriverPath("", {dir.path()});
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, fake);
}

TEST(ResolveDriverPathTest, NameFoundInFirstDirectoryWins) {
  TempDir first;
  TempDir second;
  ASSERT_FALSE(first.path().empty());
  ASSERT_FALSE(second.path().empty());
  const std::string in_first = first.Touch("libopenreg_fake.so");
  second.Touch("libopenreg_fake.so");
  absl::StatusOr<std::string> path =
      ResolveDriverPath("fake", {first.path(), second.path()});
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, in_first);
}

TEST(ResolveDriverPathTest, NameFoundInSecondDirectory) {
  TempDir first;
  TempDir second;
  ASSERT_FALSE(first.path().empty());
  ASSERT_FALSE(second.path().empty());
  first.Touch("libopenreg_other.so");
  const std::string in_second = second.Touch("libopenreg_fake.so");
  absl::StatusOr<std::string> path =
      ResolveDriverPath("fake", {first.path(), second.path()});
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, in_second);
}

TEST(ResolveDriverPathTest, UnknownNameListsDriversDirectoriesAndFix) {
  TempDir first;
  TempDir second;
  ASSERT_FALSE(first.path().empty());
  ASSERT_FALSE(second.path().empty());
  first.Touch("libopenreg_beta.so");
  second.Touch("libopenreg_alpha.so");
  absl::StatusOr<std::string> path =
      ResolveDriverPath("gpu", {first.path(), second.path()});
  ExpectError(path.status(), absl::StatusCode::kNotFound,
              {"OPENREG_DRIVER='gpu'", "libopenreg_gpu.so", first.path(),
               second.path(), "Available drivers: alpha, beta",
               // How to fix it.
               "Set OPENREG_DRIVER to one of them", "absolute path",
               "OPENREG_DRIVER_PATH"});
}

TEST(ResolveDriverPathTest, UnknownNameWithNoDriversAtAll) {
  TempDir empty;
  ASSERT_FALSE(empty.path().empty());
  ExpectError(ResolveDriverPath("gpu", {empty.path()}).status(),
              absl::StatusCode::kNotFound,
              {"gpu", empty.path(), "Available drivers: none"});
  ExpectError(ResolveDriverPath("gpu", {}).status(),
              absl::StatusCode::kNotFound,
              {"gpu", "(no directories)", "Available drivers: none"});
}

TEST(ResolveDriverPathTest, RelativePathIsRejected) {
  for (const char* spec :
       {kCpuSimPath, "./libopenreg_cpu_sim.so", "../libopenreg_cpu_sim.so"}) {
    SCOPED_TRACE(spec);
    ExpectError(ResolveDriverPath(spec, {Absolute(kCpuSimDir)}).status(),
                absl::StatusCode::kInvalidArgument,
                {absl::StrCat("OPENREG_DRIVER='", spec, "'"), "relative path",
                 "absolute path"});
  }
}

TEST(ResolveDriverPathTest, AbsolutePathIsUsedAsIs) {
  const std::string absolute = Absolute(kCpuSimPath);
  // Found even though it is in none of the search directories.
  absl::StatusOr<std::string> path = ResolveDriverPath(absolute, {});
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, absolute);
}

TEST(ResolveDriverPathTest, MissingAbsolutePathIsAnError) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string missing = absl::StrCat(dir.path(), "/libopenreg_gone.so");
  ExpectError(ResolveDriverPath(missing, {Absolute(kCpuSimDir)}).status(),
              absl::StatusCode::kNotFound,
              {missing, "does not exist", "cpu_sim"});
}

}  // namespace
}  // namespace openreg
