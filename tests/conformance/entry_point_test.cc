// The entry symbol and the table it returns.
#include <cctype>
#include <cstddef>
#include <cstring>
#include <string>

#include "tests/conformance/driver_fixture.h"

namespace openreg::conformance {
namespace {

OPENREG_CONFORMANCE_SUITE(EntryPointTest, UninitializedDriverTest);

bool IsPrintable(const char* text) {
  if (text == nullptr || text[0] == '\0') return false;
  for (const char* c = text; *c != '\0'; ++c) {
    if (!std::isprint(static_cast<unsigned char>(*c))) return false;
  }
  return true;
}

TEST_P(EntryPointTest, ReturnsACompleteTableOfTheCoresMajorVersion) {
  EXPECT_GE(api_->struct_size, OPENREG_DRIVER_API_STRUCT_SIZE_V1_0);
  EXPECT_EQ(api_->abi_version_major,
            static_cast<uint32_t>(OPENREG_DRIVER_ABI_VERSION_MAJOR));
  EXPECT_TRUE(IsPrintable(api_->driver_name));
  EXPECT_TRUE(IsPrintable(api_->driver_version));
  // Every slot after the strings is a function pointer.
  const size_t first = offsetof(openreg_driver_api, init);
  const size_t end = OPENREG_DRIVER_API_STRUCT_SIZE_V1_0;
  for (size_t offset = first; offset < end; offset += sizeof(void (*)())) {
    void (*slot)();
    std::memcpy(&slot, reinterpret_cast<const char*>(api_) + offset,
                sizeof(slot));
    EXPECT_NE(slot, nullptr) << "function slot at offset " << offset;
  }
}

TEST_P(EntryPointTest, ReturnsItsTableWhateverTheCoresVersion) {
  // Compatibility is the core's decision, made from the table's own version
  // fields, so the table comes back for any core version.
  const openreg_driver_api* table = nullptr;
  EXPECT_EQ(entry_(OPENREG_DRIVER_ABI_VERSION_MAJOR + 1, 0, &table),
            OPENREG_SUCCESS);
  EXPECT_EQ(table, api_);
  table = nullptr;
  EXPECT_EQ(entry_(OPENREG_DRIVER_ABI_VERSION_MAJOR, 7, &table),
            OPENREG_SUCCESS);
  EXPECT_EQ(table, api_);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        entry_(OPENREG_DRIVER_ABI_VERSION_MAJOR, 0, nullptr)));
}

TEST_P(EntryPointTest, LastErrorMessageIsCallableBeforeInit) {
  ASSERT_NE(api_->last_error_message(), nullptr);
}

}  // namespace
}  // namespace openreg::conformance
