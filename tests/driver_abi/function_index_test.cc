// docs/driver_abi.md carries the function index generated from the ABI's one
// function list, and the generator reads that list right.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "driver_abi/openreg_driver.h"
#include "gtest/gtest.h"
#include "tools/driver_abi_index/function_index.h"

namespace openreg {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(FunctionIndexTest, DocsCarryTheGeneratedIndex) {
  const std::string page = ReadFile("docs/driver_abi.md");
  ASSERT_FALSE(page.empty()) << "docs/driver_abi.md is not in the runfiles";
  const std::string begin_marker(kFunctionIndexBegin);
  const std::string end_marker(kFunctionIndexEnd);
  const size_t begin = page.find(begin_marker);
  const size_t end = page.find(end_marker);
  ASSERT_NE(begin, std::string::npos)
      << "docs/driver_abi.md lacks the line\n" << kFunctionIndexBegin;
  ASSERT_NE(end, std::string::npos)
      << "docs/driver_abi.md lacks the line\n" << kFunctionIndexEnd;
  const size_t table = begin + begin_marker.size() + 2;  // "\n\n"
  ASSERT_LT(table, end);
  EXPECT_EQ(page.substr(table, end - table), FunctionIndexMarkdown() + "\n")
      << "docs/driver_abi.md's function index differs from "
         "OPENREG_DRIVER_FUNCTIONS: replace it with the output of `bazel run "
         "//tools/driver_abi_index`";
}

TEST(FunctionIndexTest, ListsEveryFunctionOfTheTable) {
  // Rows of the table body: one per function pointer after the prefix.
  const std::string index = FunctionIndexMarkdown();
  const size_t rows =
      std::vector<std::string>(absl::StrSplit(index, '\n', absl::SkipEmpty()))
          .size() -
      2;  // the header and its rule
  const size_t pointers =
      (sizeof(openreg_driver_api) - sizeof(openreg_driver_api_prefix)) /
      sizeof(void (*)());
  EXPECT_EQ(rows, pointers);
}

TEST(FunctionIndexTest, ParameterNamesDropTypesAndPointers) {
  EXPECT_EQ(ParameterNames("(openreg_context context)"), "context");
  EXPECT_EQ(ParameterNames("(openreg_context context, const void* ptr, "
                           "openreg_pointer_attributes* attributes)"),
            "context, ptr, attributes");
  EXPECT_EQ(ParameterNames("( int32_t *count )"), "count");
}

}  // namespace
}  // namespace openreg
