// DriverLibrary: loading and validating 2.0 and 1.x tables, and the broken
// drivers of ./broken, each refused with the right code and a message naming
// what is wrong, and not left loaded.
#include "core/driver/driver_library.h"

#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/driver/driver_paths.h"
#include "driver_abi/openreg_driver_v1.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/driver/test_paths.h"

namespace openreg {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// A library the loader rejected must not stay loaded.
void ExpectNotLoaded(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_EQ(handle, nullptr) << path << " is still loaded after a failed load";
  if (handle != nullptr) dlclose(handle);
}

// The message of loading `path`, which must fail with `code` and leave
// nothing loaded.
std::string LoadError(
    const std::string& path,
    absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  auto library = DriverLibrary::Load(path);
  EXPECT_FALSE(library.ok()) << path;
  if (library.ok()) return "";
  EXPECT_EQ(library.status().code(), code) << library.status();
  ExpectNotLoaded(path);
  return std::string(library.status().message());
}

TEST(DriverLibraryTest, LoadsA2_0DriverAndItsTableAsIs) {
  auto library = DriverLibrary::Load(kMinimalPath);
  ASSERT_TRUE(library.ok()) << library.status();
  const DriverLibrary& lib = **library;
  EXPECT_EQ(lib.name(), "minimal");
  EXPECT_EQ(lib.path(), kMinimalPath);
  EXPECT_EQ(lib.abi_version_major(), 2u);
  EXPECT_EQ(lib.abi_version_minor(), 0u);
  openreg_context context = nullptr;
  ASSERT_EQ(lib.CreateContext(nullptr, &context), OPENREG_SUCCESS);
  int32_t count = 0;
  EXPECT_EQ(lib.api().get_device_count(context, &count), OPENREG_SUCCESS);
  EXPECT_EQ(count, 2);
  EXPECT_EQ(lib.api().context_destroy(context), OPENREG_SUCCESS);
}

TEST(DriverLibraryTest, LoadsAShippedDriver) {
  const std::string path = ShippedDriverPath("cpu_sim");
  auto library = DriverLibrary::Load(path);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->name(), "cpu_sim");
  EXPECT_EQ((*library)->path(), path);
  EXPECT_FALSE((*library)->version().empty());
  EXPECT_EQ((*library)->abi_version_major(),
            uint32_t{OPENREG_DRIVER_ABI_VERSION_MAJOR});
  EXPECT_GE((*library)->api().struct_size, OPENREG_DRIVER_API_STRUCT_SIZE_V2_0);
}

// A library is unloaded with its last reference. (Not the working drivers:
// keep_drivers_mapped.cc keeps those mapped.)
TEST(DriverLibraryTest, UnloadsWithTheLastReference) {
  const std::string path = BrokenDriverPath("null_optional_function_v1");
  auto library = DriverLibrary::Load(path);
  ASSERT_TRUE(library.ok()) << library.status();
  library->reset();
  ExpectNotLoaded(path);
}

TEST(DriverLibraryTest, ResolvedDefaultDriverLoads) {
  absl::StatusOr<std::string> path = ResolveDriverPath(
      "", {std::filesystem::absolute("plugins/cpu_sim").string()});
  ASSERT_TRUE(path.ok()) << path.status();
  auto library = DriverLibrary::Load(*path);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->name(), "cpu_sim");
}

// The minimal driver tells a destroyed or made-up context from a live one
// (without reading freed memory: this runs under AddressSanitizer too), and
// its contexts coexist.
TEST(DriverLibraryTest, MinimalDriverRejectsDeadAndMadeUpContexts) {
  auto library = DriverLibrary::Load(kMinimalPath);
  ASSERT_TRUE(library.ok()) << library.status();
  const openreg_driver_api& api = (*library)->api();
  openreg_context first = nullptr;
  openreg_context second = nullptr;
  ASSERT_EQ(api.context_create(nullptr, &first), OPENREG_SUCCESS);
  ASSERT_EQ(api.context_create(nullptr, &second), OPENREG_SUCCESS);
  EXPECT_NE(first, second);
  ASSERT_EQ(api.context_destroy(first), OPENREG_SUCCESS);
  int32_t count = 0;
  int made_up = 0;
  for (openreg_context dead : {first, static_cast<openreg_context>(nullptr),
                               reinterpret_cast<openreg_context>(&made_up)}) {
    EXPECT_EQ(api.get_device_count(dead, &count),
              OPENREG_ERROR_INVALID_ARGUMENT);
    EXPECT_THAT(std::string(api.last_error_message(dead)),
                HasSubstr("get_device_count: the context is NULL, was "
                          "destroyed, or was never returned by "
                          "context_create"));
    EXPECT_EQ(api.context_destroy(dead), OPENREG_ERROR_INVALID_ARGUMENT);
  }
  // A new context never reuses the destroyed one's handle.
  openreg_context third = nullptr;
  ASSERT_EQ(api.context_create(nullptr, &third), OPENREG_SUCCESS);
  EXPECT_NE(third, first);
  EXPECT_EQ(api.get_device_count(second, &count), OPENREG_SUCCESS);
  EXPECT_EQ(api.context_destroy(second), OPENREG_SUCCESS);
  EXPECT_EQ(api.context_destroy(third), OPENREG_SUCCESS);
}

TEST(DriverLibraryTest, LoadsA1_0DriverBehindThe2_0Table) {
  auto library = DriverLibrary::Load(kMinimalV1Path);
  ASSERT_TRUE(library.ok()) << library.status();
  const DriverLibrary& lib = **library;
  EXPECT_EQ(lib.name(), "minimal_v1");
  EXPECT_EQ(lib.abi_version_major(), 1u);
  EXPECT_EQ(lib.abi_version_minor(), 0u);
  EXPECT_EQ(lib.api().abi_version_major, 2u);
  openreg_context context = nullptr;
  ASSERT_EQ(lib.CreateContext(nullptr, &context), OPENREG_SUCCESS);
  void* ptr = nullptr;
  EXPECT_EQ(lib.api().device_malloc(context, 1, 1024, &ptr), OPENREG_SUCCESS);
  EXPECT_EQ(lib.api().device_free(context, 1, ptr), OPENREG_SUCCESS);
  EXPECT_EQ(lib.api().context_destroy(context), OPENREG_SUCCESS);
}

TEST(DriverLibraryTest, RefusesAnotherMajorNamingBothVersions) {
  EXPECT_THAT(LoadError(BrokenDriverPath("wrong_major"),
                        absl::StatusCode::kFailedPrecondition),
              AllOf(HasSubstr(BrokenDriverPath("wrong_major")),
                    HasSubstr("implements driver ABI version 3.2"),
                    HasSubstr("implements ABI version 2.2"),
                    HasSubstr("1.x through an adapter"),
                    HasSubstr("driver_abi/openreg_driver.h")));
}

TEST(DriverLibraryTest, NamesEveryMissingFunctionAndNoOther) {
  const std::string message = LoadError(BrokenDriverPath("missing_function"));
  EXPECT_THAT(message,
              HasSubstr("is missing required functions stream_get_priority, "
                        "event_elapsed_time of driver ABI 2.0"));
  EXPECT_THAT(message, Not(HasSubstr("launch_host_func")));
}

TEST(DriverLibraryTest, RefusesASmallTable) {
  EXPECT_THAT(
      LoadError(BrokenDriverPath("small_table")),
      AllOf(HasSubstr(absl::StrCat(
                "reports a function table of ",
                OPENREG_DRIVER_API_STRUCT_SIZE_V2_0 - sizeof(void*), " bytes")),
            HasSubstr(absl::StrCat("ABI version 2.0 requires at least ",
                                   OPENREG_DRIVER_API_STRUCT_SIZE_V2_0,
                                   " bytes")),
            HasSubstr("sizeof(openreg_driver_api)")));
}

TEST(DriverLibraryTest, RefusesAnEmptyName) {
  EXPECT_THAT(LoadError(BrokenDriverPath("bad_name")),
              HasSubstr("must set driver_name and driver_version"));
}

TEST(DriverLibraryTest, RefusesALibraryWithoutTheEntrySymbol) {
  EXPECT_THAT(LoadError(BrokenDriverPath("no_entry_symbol")),
              AllOf(HasSubstr("does not export the entry symbol"),
                    HasSubstr(OPENREG_DRIVER_ENTRY_SYMBOL_NAME)));
}

TEST(DriverLibraryTest, RefusesAnEntryPointThatRefuses) {
  EXPECT_THAT(LoadError(BrokenDriverPath("refuses_version"),
                        absl::StatusCode::kFailedPrecondition),
              HasSubstr("returned NOT_SUPPORTED for core ABI version 2.2"));
}

TEST(DriverLibraryTest, RefusesWhatIsNotALibrary) {
  EXPECT_THAT(LoadError("tests/core/driver/broken/not_a_library.so"),
              AllOf(HasSubstr("could not load openreg driver "
                              "tests/core/driver/broken/not_a_library.so as a "
                              "shared library"),
                    HasSubstr("driver_abi/openreg_driver.h")));
  const std::string missing = "tests/core/driver/broken/libopenreg_gone.so";
  EXPECT_THAT(
      LoadError(missing),
      HasSubstr(absl::StrCat("could not load openreg driver ", missing)));
}

// --- 1.x libraries -------------------------------------------------------

TEST(DriverLibraryTest, NamesTheMissing1_0Function) {
  EXPECT_THAT(LoadError(BrokenDriverPath("missing_function_v1")),
              HasSubstr("'missing_function_v1' (" +
                        BrokenDriverPath("missing_function_v1") +
                        ") is missing required function event_elapsed_time "
                        "of driver ABI 1.0"));
}

TEST(DriverLibraryTest, RefusesASmall1_xTable) {
  EXPECT_THAT(LoadError(BrokenDriverPath("small_table_v1")),
              AllOf(HasSubstr(absl::StrCat(
                        "ABI version 1.0 requires at least ",
                        OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0, " bytes")),
                    HasSubstr("sizeof(openreg_driver_api_v1)")));
}

TEST(DriverLibraryTest, Refuses1_1ClaimedWithoutItsFields) {
  EXPECT_THAT(LoadError(BrokenDriverPath("minor_without_fields_v1")),
              AllOf(HasSubstr(absl::StrCat(
                        "reports ABI version 1.1 but a function table of ",
                        OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0, " bytes")),
                    HasSubstr(absl::StrCat(
                        "ABI version 1.1 has a table of ",
                        OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_1, " bytes"))));
}

// ABI 1.1 allows a NULL optional function: the library loads and works.
TEST(DriverLibraryTest, Loads1_1WithANullOptionalFunction) {
  auto library =
      DriverLibrary::Load(BrokenDriverPath("null_optional_function_v1"));
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->abi_version_major(), 1u);
  EXPECT_EQ((*library)->abi_version_minor(), 1u);
  openreg_context context = nullptr;
  ASSERT_EQ((*library)->CreateContext(nullptr, &context), OPENREG_SUCCESS);
  EXPECT_EQ((*library)->api().context_destroy(context), OPENREG_SUCCESS);
}

// 1.x tables, checked in process: a complete 1.0 table whose every entry is
// a non-NULL dummy.
openreg_status Dummy() { return OPENREG_SUCCESS; }

openreg_driver_api_v1 CompleteV1Table() {
  openreg_driver_api_v1 table{};
  void (*dummy)() = reinterpret_cast<void (*)()>(Dummy);
  auto* slots = reinterpret_cast<char*>(&table.init);
  for (size_t offset = 0; offset + sizeof(dummy) <=
                          sizeof(table) - offsetof(openreg_driver_api_v1, init);
       offset += sizeof(dummy)) {
    std::memcpy(slots + offset, &dummy, sizeof(dummy));
  }
  table.struct_size = OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0;
  table.abi_version_major = 1;
  table.abi_version_minor = 0;
  table.driver_name = "old";
  table.driver_version = "1";
  return table;
}

absl::Status ValidateV1(const openreg_driver_api_v1& table) {
  return ValidateDriverApi(
      reinterpret_cast<const openreg_driver_api_prefix*>(&table), "old.so");
}

TEST(ValidateDriverApiTest, AcceptsComplete1_0And1_1Tables) {
  openreg_driver_api_v1 table = CompleteV1Table();
  EXPECT_TRUE(ValidateV1(table).ok()) << ValidateV1(table);
  table.struct_size = OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_1;
  table.abi_version_minor = 1;
  table.stream_get_priority = nullptr;  // optional in 1.1
  EXPECT_TRUE(ValidateV1(table).ok()) << ValidateV1(table);
}

TEST(ValidateDriverApiTest, NamesAMissing1_0Function) {
  openreg_driver_api_v1 table = CompleteV1Table();
  table.init = nullptr;
  table.device_synchronize = nullptr;
  EXPECT_THAT(std::string(ValidateV1(table).message()),
              HasSubstr("missing required functions init, device_synchronize "
                        "of driver ABI 1.0"));
}

TEST(ValidateDriverApiTest, RefusesASmall1_xTable) {
  openreg_driver_api_v1 table = CompleteV1Table();
  table.struct_size = OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0 - sizeof(void*);
  EXPECT_THAT(std::string(ValidateV1(table).message()),
              HasSubstr("ABI version 1.0 requires at least 240 bytes"));
}

TEST(ValidateDriverApiTest, Refuses1_1ClaimedWithA1_0Table) {
  openreg_driver_api_v1 table = CompleteV1Table();
  table.abi_version_minor = 1;
  EXPECT_THAT(std::string(ValidateV1(table).message()),
              HasSubstr("reports ABI version 1.1 but a function table of 240 "
                        "bytes; ABI version 1.1 has a table of 248 bytes"));
}

TEST(ValidateDriverApiTest, RefusesMajorZeroAndTinyTables) {
  openreg_driver_api_v1 table = CompleteV1Table();
  table.abi_version_major = 0;
  EXPECT_EQ(ValidateV1(table).code(), absl::StatusCode::kFailedPrecondition);
  table.struct_size = 4;
  EXPECT_THAT(std::string(ValidateV1(table).message()),
              HasSubstr("too small to hold its ABI version"));
  EXPECT_FALSE(ValidateDriverApi(nullptr, "x.so").ok());
}

// 2.0 tables, checked in process: copies of the minimal driver's table with
// one thing broken. The library stays loaded while the copies are used.
class ValidateDriverApi20Test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto library = DriverLibrary::Load(kMinimalPath);
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = *std::move(library);
    table_ = library_->api();
  }
  absl::Status Validate(const openreg_driver_api& table) const {
    return ValidateDriverApi(
        reinterpret_cast<const openreg_driver_api_prefix*>(&table),
        "in-memory");
  }

  std::shared_ptr<const DriverLibrary> library_;
  openreg_driver_api table_{};
};

TEST_F(ValidateDriverApi20Test, CompleteTableIsValid) {
  EXPECT_TRUE(Validate(table_).ok()) << Validate(table_);
}

TEST_F(ValidateDriverApi20Test, NullTable) {
  const absl::Status status = ValidateDriverApi(nullptr, "in-memory");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(status.message()),
      AllOf(HasSubstr("in-memory"), HasSubstr(OPENREG_DRIVER_ENTRY_SYMBOL_NAME),
            HasSubstr("no function table")));
}

TEST_F(ValidateDriverApi20Test, NewerMinorVersionWithLargerTableIsAccepted) {
  table_.abi_version_minor = OPENREG_DRIVER_ABI_VERSION_MINOR + 3;
  table_.struct_size = sizeof(openreg_driver_api) + 64;
  EXPECT_TRUE(Validate(table_).ok()) << Validate(table_);
}

// A newer minor is held to the sizes this core knows, not to its own.
TEST_F(ValidateDriverApi20Test, NewerMinorVersionNeedsOnlyTheKnownTable) {
  table_.abi_version_minor = OPENREG_DRIVER_ABI_VERSION_MINOR + 3;
  table_.struct_size = OPENREG_DRIVER_API_STRUCT_SIZE_V2_2;
  EXPECT_TRUE(Validate(table_).ok()) << Validate(table_);
}

TEST_F(ValidateDriverApi20Test, SeveralMissingFunctionsAreAllNamed) {
  table_.context_create = nullptr;
  table_.stream_query = nullptr;
  table_.device_synchronize = nullptr;
  const absl::Status status = Validate(table_);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("'minimal' (in-memory)"),
                    HasSubstr("missing required functions context_create, "
                              "stream_query, device_synchronize of driver "
                              "ABI 2.0")));
}

TEST_F(ValidateDriverApi20Test, BadNameAndVersionStrings) {
  const std::string too_long(300, 'n');
  for (const char* bad : {static_cast<const char*>(nullptr), "", "tab\there",
                          "new\nline", too_long.c_str()}) {
    SCOPED_TRACE(bad == nullptr ? "(null)" : bad);
    openreg_driver_api bad_name = table_;
    bad_name.driver_name = bad;
    EXPECT_THAT(std::string(Validate(bad_name).message()),
                AllOf(HasSubstr("in-memory"),
                      HasSubstr("driver_name and driver_version")));
    openreg_driver_api bad_version = table_;
    bad_version.driver_version = bad;
    EXPECT_THAT(std::string(Validate(bad_version).message()),
                AllOf(HasSubstr("in-memory"),
                      HasSubstr("driver_name and driver_version")));
  }
}

// The message promises "at most 256 characters": 256 pass, 257 do not.
TEST_F(ValidateDriverApi20Test, NameOf256CharactersIsTheLongest) {
  const std::string longest(256, 'n');
  table_.driver_name = longest.c_str();
  EXPECT_TRUE(Validate(table_).ok()) << Validate(table_);
  const std::string too_long(257, 'n');
  table_.driver_name = too_long.c_str();
  EXPECT_FALSE(Validate(table_).ok());
}

}  // namespace
}  // namespace openreg
