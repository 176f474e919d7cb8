#include "tools/driver_abi_index/function_index.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {
namespace {

struct FunctionEntry {
  int minor;
  absl::string_view name;
  absl::string_view params;
};

// Stringizing the parameter list is the only way to see it as text; the
// preprocessor folds its white space to single spaces.
#define OPENREG_INDEX_ENTRY(minor, return_type, name, params) \
  FunctionEntry{minor, #name, #params},
constexpr FunctionEntry kFunctions[] = {
    OPENREG_DRIVER_FUNCTIONS(OPENREG_INDEX_ENTRY)};
#undef OPENREG_INDEX_ENTRY

}  // namespace

std::string ParameterNames(absl::string_view parenthesized_params) {
  absl::string_view inner = absl::StripAsciiWhitespace(parenthesized_params);
  inner.remove_prefix(1);  // "("
  inner.remove_suffix(1);  // ")"
  std::vector<std::string> names;
  for (absl::string_view param : absl::StrSplit(inner, ',')) {
    param = absl::StripAsciiWhitespace(param);
    // The name is the last word; pointers put their '*' before it.
    const size_t start = param.find_last_of(" *");
    names.emplace_back(start == absl::string_view::npos
                           ? param
                           : param.substr(start + 1));
  }
  return absl::StrJoin(names, ", ");
}

std::string FunctionIndexMarkdown() {
  std::string table =
      "| # | function | since | a driver must provide it |\n"
      "| --- | --- | --- | --- |\n";
  int row = 0;
  for (const FunctionEntry& function : kFunctions) {
    absl::StrAppend(&table, "| ", ++row, " | `", function.name, "(",
                    ParameterNames(function.params), ")` | ",
                    OPENREG_DRIVER_ABI_VERSION_MAJOR, ".", function.minor,
                    " | ", function.minor == 0 ? "yes" : "no (optional)",
                    " |\n");
  }
  return table;
}

}  // namespace openreg
