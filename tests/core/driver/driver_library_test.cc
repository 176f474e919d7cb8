// DriverLibrary: loading and validating 2.0 and 1.x tables, and the broken
// drivers of ./broken, each refused with a message naming what is wrong.
#include "core/driver/driver_library.h"

#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "driver_abi/openreg_driver_v1.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/driver/test_paths.h"

namespace openreg {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string LoadError(const std::string& path) {
  auto library = DriverLibrary::Load(path);
  EXPECT_FALSE(library.ok()) << path;
  return library.ok() ? "" : std::string(library.status().message());
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
  EXPECT_THAT(LoadError(BrokenDriverPath("wrong_major")),
              AllOf(HasSubstr("implements driver ABI version 3.0"),
                    HasSubstr("implements ABI version 2.0"),
                    HasSubstr("1.x through an adapter")));
}

TEST(DriverLibraryTest, NamesEveryMissingFunction) {
  EXPECT_THAT(LoadError(BrokenDriverPath("missing_function")),
              HasSubstr("is missing required functions stream_get_priority, "
                        "event_elapsed_time of driver ABI 2.0"));
}

TEST(DriverLibraryTest, RefusesASmallTable) {
  EXPECT_THAT(LoadError(BrokenDriverPath("small_table")),
              AllOf(HasSubstr("ABI version 2.0 requires at least 248 bytes"),
                    HasSubstr("240 bytes")));
}

TEST(DriverLibraryTest, RefusesAnEmptyName) {
  EXPECT_THAT(LoadError(BrokenDriverPath("bad_name")),
              HasSubstr("must set driver_name and driver_version"));
}

TEST(DriverLibraryTest, RefusesWhatIsNotADriver) {
  EXPECT_THAT(LoadError(BrokenDriverPath("no_entry_symbol")),
              HasSubstr("does not export the entry symbol"));
  EXPECT_THAT(LoadError(BrokenDriverPath("refuses_version")),
              HasSubstr("returned NOT_SUPPORTED for core ABI version 2.0"));
  EXPECT_THAT(LoadError("tests/core/driver/broken/not_a_library.so"),
              HasSubstr("as a shared library"));
}

// 1.x tables, checked in process: a complete 1.0 table whose every entry is
// a non-NULL dummy.
openreg_status Dummy() { return OPENREG_SUCCESS; }

openreg_driver_api_v1 CompleteV1Table() {
  openreg_driver_api_v1 table{};
  void (*dummy)() = reinterpret_cast<void (*)()>(Dummy);
  auto* slots = reinterpret_cast<char*>(&table.init);
  for (size_t offset = 0;
       offset + sizeof(dummy) <= sizeof(table) - offsetof(openreg_driver_api_v1, init);
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

}  // namespace
}  // namespace openreg
