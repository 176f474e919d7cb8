// The entry symbol a driver exports and the table it returns, of whichever
// major the driver implements: the only part of the suite that looks at the
// driver's own table rather than the 2.0 one DriverLibrary presents.
#include <cctype>
#include <cstddef>
#include <cstring>
#include <string>

#include "driver_abi/openreg_driver_v1.h"
#include "tests/conformance/driver_fixture.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(EntryPointTest, LoadedDriverTest);

bool IsPrintable(const char* text) {
  if (text == nullptr || text[0] == '\0') return false;
  for (const char* c = text; *c != '\0'; ++c) {
    if (!std::isprint(static_cast<unsigned char>(*c))) return false;
  }
  return true;
}

// The driver's table as the entry point hands it out for a core of version
// major.minor; read through the prefix every major shares.
const openreg_driver_api_prefix* TableFor(openreg_driver_get_api_fn entry,
                                          uint32_t major, uint32_t minor) {
  const openreg_driver_api* table = nullptr;
  EXPECT_EQ(entry(major, minor, &table), OPENREG_SUCCESS)
      << "core version " << major << "." << minor;
  return reinterpret_cast<const openreg_driver_api_prefix*>(table);
}

// The calling thread's last error, read from the driver's own table: with
// no context for a 2.0 table, and from the 1.x table's one instance.
const char* TableMessage(const openreg_driver_api_prefix& table) {
  switch (table.abi_version_major) {
    case OPENREG_DRIVER_ABI_VERSION_MAJOR:
      return reinterpret_cast<const openreg_driver_api&>(table)
          .last_error_message(nullptr);
    case 1:
      return reinterpret_cast<const openreg_driver_api_v1&>(table)
          .last_error_message();
    default:
      return nullptr;
  }
}

// A 2.0 table: at least the 2.0 size and every 2.0 function set. Functions
// of later minor versions are optional groups (the header's list): NULL
// means the driver does not have them.
void ExpectCompleteV2Table(const openreg_driver_api& table) {
  EXPECT_GE(table.struct_size, OPENREG_DRIVER_API_STRUCT_SIZE_V2_0);
#define OPENREG_EXPECT_SET(minor, return_type, name, params) \
  if (minor == 0) EXPECT_NE(table.name, nullptr) << #name " (2.0) is NULL";
  OPENREG_DRIVER_FUNCTIONS(OPENREG_EXPECT_SET)
#undef OPENREG_EXPECT_SET
}

// A 1.x table: at least the 1.0 size and every 1.0 function set (the
// optional 1.1 stream_get_priority may be NULL).
void ExpectCompleteV1Table(const openreg_driver_api_v1& table) {
  EXPECT_GE(table.struct_size, OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0);
  const size_t first = offsetof(openreg_driver_api_v1, init);
  const size_t end = OPENREG_DRIVER_API_V1_STRUCT_SIZE_V1_0;
  for (size_t offset = first; offset < end; offset += sizeof(void (*)())) {
    void (*slot)();
    std::memcpy(&slot, reinterpret_cast<const char*>(&table) + offset,
                sizeof(slot));
    EXPECT_NE(slot, nullptr) << "1.0 function slot at offset " << offset;
  }
}

TEST_P(EntryPointTest, ReturnsACompleteTableOfItsOwnMajorVersion) {
  const openreg_driver_api_prefix* prefix =
      TableFor(entry_, OPENREG_DRIVER_ABI_VERSION_MAJOR,
               OPENREG_DRIVER_ABI_VERSION_MINOR);
  ASSERT_NE(prefix, nullptr);
  EXPECT_TRUE(IsPrintable(prefix->driver_name));
  EXPECT_TRUE(IsPrintable(prefix->driver_version));
  // The version the loader read is the one the table states.
  EXPECT_EQ(prefix->abi_version_major, library().abi_version_major());
  EXPECT_EQ(prefix->abi_version_minor, library().abi_version_minor());
  switch (prefix->abi_version_major) {
    case OPENREG_DRIVER_ABI_VERSION_MAJOR:
      ExpectCompleteV2Table(
          *reinterpret_cast<const openreg_driver_api*>(prefix));
      break;
    case 1:
      ExpectCompleteV1Table(
          *reinterpret_cast<const openreg_driver_api_v1*>(prefix));
      break;
    default:
      ADD_FAILURE() << "the table states ABI major "
                    << prefix->abi_version_major
                    << "; the core supports majors 1 and "
                    << OPENREG_DRIVER_ABI_VERSION_MAJOR;
  }
}

TEST_P(EntryPointTest, ReturnsItsTableWhateverTheCoresVersion) {
  // Compatibility is the core's decision, made from the table's own version
  // fields, so the same table comes back for any core version.
  const openreg_driver_api_prefix* table =
      TableFor(entry_, OPENREG_DRIVER_ABI_VERSION_MAJOR,
               OPENREG_DRIVER_ABI_VERSION_MINOR);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(TableFor(entry_, OPENREG_DRIVER_ABI_VERSION_MAJOR + 1, 0), table);
  EXPECT_EQ(TableFor(entry_, OPENREG_DRIVER_ABI_VERSION_MAJOR, 7), table);
  EXPECT_EQ(TableFor(entry_, 1, 0), table);
  const openreg_status status =
      entry_(OPENREG_DRIVER_ABI_VERSION_MAJOR, 0, nullptr);
  EXPECT_EQ(status, OPENREG_ERROR_INVALID_ARGUMENT);
  const char* message = TableMessage(*table);
  EXPECT_TRUE(message != nullptr && message[0] != '\0')
      << "a NULL table pointer came without a last_error_message";
}

TEST_P(EntryPointTest, LastErrorMessageIsCallableWithoutAContext) {
  ASSERT_NE(api_->last_error_message(nullptr), nullptr);
}

}  // namespace
}  // namespace openreg::conformance
