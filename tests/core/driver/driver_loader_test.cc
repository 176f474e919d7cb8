// Tests finding, loading and validating driver libraries: the search-path
// rules of ResolveDriverPath, ListAvailableDrivers, and LoadDriverLibrary on
// the real cpu_sim driver and on deliberately broken libraries (see
// tests/core/driver/broken), checking both the status code and that the
// message says what is wrong.
#include "core/driver/driver_loader.h"

#include <dlfcn.h>
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
#include "driver_abi/openreg_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace openreg {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Relative to the runfiles root, the working directory of a Bazel test.
constexpr char kCpuSimDir[] = "plugins/cpu_sim";
constexpr char kCpuSimPath[] = "plugins/cpu_sim/libopenreg_cpu_sim.so";
constexpr char kBrokenDir[] = "tests/core/driver/broken";

std::string BrokenDriver(const std::string& file) {
  return absl::StrCat(kBrokenDir, "/", file);
}

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
        "/driver_loader_test.XXXXXX");
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

// --- LoadDriverLibrary: the real driver ----------------------------------------

TEST(LoadDriverLibraryTest, LoadsCpuSim) {
  absl::StatusOr<LoadedDriverLibrary> library = LoadDriverLibrary(kCpuSimPath);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_NE(library->handle, nullptr);
  ASSERT_NE(library->api, nullptr);
  EXPECT_EQ(library->path, kCpuSimPath);
  EXPECT_STREQ(library->api->driver_name, "cpu_sim");
  EXPECT_EQ(library->api->abi_version_major,
            uint32_t{OPENREG_DRIVER_ABI_VERSION_MAJOR});
  EXPECT_GE(library->api->struct_size, OPENREG_DRIVER_API_STRUCT_SIZE_V1_0);

  UnloadDriverLibrary(*library);
  EXPECT_EQ(library->handle, nullptr);
  EXPECT_EQ(library->api, nullptr);
  // Unloading twice, or an empty library, is harmless.
  UnloadDriverLibrary(*library);
  LoadedDriverLibrary empty;
  UnloadDriverLibrary(empty);
}

TEST(LoadDriverLibraryTest, ResolvedDefaultDriverLoads) {
  absl::StatusOr<std::string> path =
      ResolveDriverPath("", {Absolute(kCpuSimDir)});
  ASSERT_TRUE(path.ok()) << path.status();
  absl::StatusOr<LoadedDriverLibrary> library = LoadDriverLibrary(*path);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_STREQ(library->api->driver_name, "cpu_sim");
  UnloadDriverLibrary(*library);
}

// --- LoadDriverLibrary: broken drivers ------------------------------------------

// A library the loader rejected must not stay loaded.
void ExpectNotLoaded(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_EQ(handle, nullptr) << path << " is still loaded after a failed load";
  if (handle != nullptr) dlclose(handle);
}

TEST(LoadDriverLibraryTest, WrongMajorVersionNamesBothVersions) {
  const std::string path = BrokenDriver("libwrong_major.so");
  ExpectError(
      LoadDriverLibrary(path).status(), absl::StatusCode::kFailedPrecondition,
      {path,
       absl::StrCat("driver ABI version ", OPENREG_DRIVER_ABI_VERSION_MAJOR + 1,
                    ".", OPENREG_DRIVER_ABI_VERSION_MINOR),
       absl::StrCat("core implements ABI version ",
                    OPENREG_DRIVER_ABI_VERSION_MAJOR, ".",
                    OPENREG_DRIVER_ABI_VERSION_MINOR),
       "major versions must match", "openreg_driver.h"});
  ExpectNotLoaded(path);
}

TEST(LoadDriverLibraryTest, MissingFunctionIsNamed) {
  const std::string path = BrokenDriver("libmissing_function.so");
  const absl::Status status = LoadDriverLibrary(path).status();
  ExpectError(status, absl::StatusCode::kInvalidArgument,
              {path, "'missing_function'",
               "missing required function event_elapsed_time of"});
  // Only the one function that is missing is named.
  EXPECT_THAT(std::string(status.message()),
              AllOf(Not(HasSubstr("functions")),
                    Not(HasSubstr("launch_host_func"))));
  ExpectNotLoaded(path);
}

TEST(LoadDriverLibraryTest, NoEntrySymbolNamesTheSymbol) {
  const std::string path = BrokenDriver("libno_entry_symbol.so");
  ExpectError(LoadDriverLibrary(path).status(),
              absl::StatusCode::kInvalidArgument,
              {path, "is not an openreg driver",
               absl::StrCat("entry symbol ", OPENREG_DRIVER_ENTRY_SYMBOL_NAME),
               "OPENREG_DRIVER_ENTRY_SYMBOL"});
  ExpectNotLoaded(path);
}

TEST(LoadDriverLibraryTest, EntryPointRefusingTheVersion) {
  const std::string path = BrokenDriver("librefuses_version.so");
  ExpectError(LoadDriverLibrary(path).status(),
              absl::StatusCode::kFailedPrecondition,
              {path, "refused to load",
               absl::StrCat("returned NOT_SUPPORTED for core ABI version ",
                            OPENREG_DRIVER_ABI_VERSION_MAJOR, ".",
                            OPENREG_DRIVER_ABI_VERSION_MINOR),
               "let the core decide compatibility"});
  ExpectNotLoaded(path);
}

TEST(LoadDriverLibraryTest, TableSmallerThanVersion1_0) {
  const std::string path = BrokenDriver("libsmall_table.so");
  ExpectError(
      LoadDriverLibrary(path).status(), absl::StatusCode::kInvalidArgument,
      {path,
       absl::StrCat("function table of ",
                    OPENREG_DRIVER_API_STRUCT_SIZE_V1_0 - sizeof(void*),
                    " bytes"),
       absl::StrCat("at least ", OPENREG_DRIVER_API_STRUCT_SIZE_V1_0, " bytes"),
       "OPENREG_DRIVER_API_STRUCT_SIZE_V1_0"});
  ExpectNotLoaded(path);
}

// A driver built for an older minor version loads: what later minors
// appended is optional.
TEST(LoadDriverLibraryTest, DriverOfOlderMinorVersionLoads) {
  absl::StatusOr<LoadedDriverLibrary> library =
      LoadDriverLibrary(BrokenDriver("libversion_1_0.so"));
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ(library->api->abi_version_minor, 0u);
  EXPECT_EQ(library->api->struct_size, OPENREG_DRIVER_API_STRUCT_SIZE_V1_0);
  UnloadDriverLibrary(*library);
}

TEST(LoadDriverLibraryTest, NullOptionalFunctionLoads) {
  absl::StatusOr<LoadedDriverLibrary> library =
      LoadDriverLibrary(BrokenDriver("libnull_optional_function.so"));
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ(library->api->stream_get_priority, nullptr);
  UnloadDriverLibrary(*library);
}

TEST(LoadDriverLibraryTest, MinorVersionWithoutItsFieldsIsRejected) {
  const std::string path = BrokenDriver("libminor_without_fields.so");
  ExpectError(
      LoadDriverLibrary(path).status(), absl::StatusCode::kInvalidArgument,
      {path,
       absl::StrCat("reports ABI version 1.1 but a function table of ",
                    OPENREG_DRIVER_API_STRUCT_SIZE_V1_0, " bytes"),
       absl::StrCat("ABI version 1.1 has a table of ",
                    OPENREG_DRIVER_API_STRUCT_SIZE_V1_1, " bytes"),
       "OPENREG_DRIVER_API_STRUCT_SIZE_V1_1"});
  ExpectNotLoaded(path);
}

TEST(LoadDriverLibraryTest, EmptyDriverNameIsRejected) {
  const std::string path = BrokenDriver("libbad_name.so");
  ExpectError(LoadDriverLibrary(path).status(),
              absl::StatusCode::kInvalidArgument,
              {path, "driver_name", "non-empty"});
  ExpectNotLoaded(path);
}

TEST(LoadDriverLibraryTest, FileThatIsNotASharedLibrary) {
  const std::string path = BrokenDriver("not_a_library.so");
  ExpectError(LoadDriverLibrary(path).status(),
              absl::StatusCode::kInvalidArgument,
              {absl::StrCat("could not load openreg driver ", path,
                            " as a shared library"),
               "driver_abi/openreg_driver.h"});
}

TEST(LoadDriverLibraryTest, FileThatDoesNotExist) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = absl::StrCat(dir.path(), "/libopenreg_gone.so");
  ExpectError(LoadDriverLibrary(path).status(),
              absl::StatusCode::kInvalidArgument,
              {absl::StrCat("could not load openreg driver ", path)});
}

// --- ValidateDriverApi on in-memory tables --------------------------------------

// Copies of the real cpu_sim table with one thing broken; the library stays
// loaded for the duration of each test so the copied pointers stay valid.
class ValidateDriverApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<LoadedDriverLibrary> library =
        LoadDriverLibrary(kCpuSimPath);
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = *library;
    table_ = *library_.api;
  }
  void TearDown() override { UnloadDriverLibrary(library_); }

  LoadedDriverLibrary library_;
  openreg_driver_api table_{};
};

TEST_F(ValidateDriverApiTest, CompleteTableIsValid) {
  EXPECT_TRUE(ValidateDriverApi(&table_, "in-memory").ok());
}

TEST_F(ValidateDriverApiTest, NullTable) {
  ExpectError(ValidateDriverApi(nullptr, "in-memory"),
              absl::StatusCode::kInvalidArgument,
              {"in-memory", OPENREG_DRIVER_ENTRY_SYMBOL_NAME,
               "no function table"});
}

TEST_F(ValidateDriverApiTest, NewerMinorVersionWithLargerTableIsAccepted) {
  table_.abi_version_minor = OPENREG_DRIVER_ABI_VERSION_MINOR + 3;
  table_.struct_size = sizeof(openreg_driver_api) + 64;
  EXPECT_TRUE(ValidateDriverApi(&table_, "in-memory").ok());
}

// A newer minor is held to the sizes this core knows, not to its own.
TEST_F(ValidateDriverApiTest, NewerMinorVersionNeedsOnlyTheKnownTable) {
  table_.abi_version_minor = OPENREG_DRIVER_ABI_VERSION_MINOR + 3;
  table_.struct_size = OPENREG_DRIVER_API_STRUCT_SIZE_V1_1;
  EXPECT_TRUE(ValidateDriverApi(&table_, "in-memory").ok());
  table_.struct_size = OPENREG_DRIVER_API_STRUCT_SIZE_V1_0;
  ExpectError(ValidateDriverApi(&table_, "in-memory"),
              absl::StatusCode::kInvalidArgument,
              {absl::StrCat("reports ABI version 1.",
                            OPENREG_DRIVER_ABI_VERSION_MINOR + 3),
               absl::StrCat("ABI version 1.", OPENREG_DRIVER_ABI_VERSION_MINOR,
                            " has a table of")});
}

TEST_F(ValidateDriverApiTest, Version1_0TableWithoutOptionalFunctionIsValid) {
  table_.abi_version_minor = 0;
  table_.struct_size = OPENREG_DRIVER_API_STRUCT_SIZE_V1_0;
  table_.stream_get_priority = nullptr;
  EXPECT_TRUE(ValidateDriverApi(&table_, "in-memory").ok());
}

TEST_F(ValidateDriverApiTest, OlderMajorVersionIsRejected) {
  table_.abi_version_major = OPENREG_DRIVER_ABI_VERSION_MAJOR - 1;
  ExpectError(ValidateDriverApi(&table_, "in-memory"),
              absl::StatusCode::kFailedPrecondition,
              {absl::StrCat("implements driver ABI version ",
                            OPENREG_DRIVER_ABI_VERSION_MAJOR - 1, ".")});
}

TEST_F(ValidateDriverApiTest, SeveralMissingFunctionsAreAllNamed) {
  table_.init = nullptr;
  table_.stream_query = nullptr;
  table_.device_synchronize = nullptr;
  ExpectError(ValidateDriverApi(&table_, "in-memory"),
              absl::StatusCode::kInvalidArgument,
              {"'cpu_sim' (in-memory)",
               "missing required functions init, stream_query, "
               "device_synchronize of"});
}

TEST_F(ValidateDriverApiTest, BadNameAndVersionStrings) {
  const std::string too_long(300, 'n');
  for (const char* bad : {static_cast<const char*>(nullptr), "", "tab\there",
                          "new\nline", too_long.c_str()}) {
    SCOPED_TRACE(bad == nullptr ? "(null)" : bad);
    openreg_driver_api bad_name = table_;
    bad_name.driver_name = bad;
    ExpectError(ValidateDriverApi(&bad_name, "in-memory"),
                absl::StatusCode::kInvalidArgument,
                {"in-memory", "driver_name and driver_version"});
    openreg_driver_api bad_version = table_;
    bad_version.driver_version = bad;
    ExpectError(ValidateDriverApi(&bad_version, "in-memory"),
                absl::StatusCode::kInvalidArgument,
                {"in-memory", "driver_name and driver_version"});
  }
}

TEST_F(ValidateDriverApiTest, NameOf256CharactersIsAccepted) {
  const std::string longest(256, 'n');
  table_.driver_name = longest.c_str();
  EXPECT_TRUE(ValidateDriverApi(&table_, "in-memory").ok());
}

// The message promises "at most 256 characters": the 257th is one too many.
TEST_F(ValidateDriverApiTest, NameOf257CharactersIsRejected) {
  const std::string too_long(257, 'n');
  table_.driver_name = too_long.c_str();
  EXPECT_FALSE(ValidateDriverApi(&table_, "in-memory").ok());
}

}  // namespace
}  // namespace openreg
