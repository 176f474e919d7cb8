// The index of the driver ABI's functions, generated from the ABI's one
// function list (OPENREG_DRIVER_FUNCTIONS in driver_abi/openreg_driver.h), as
// the Markdown table that docs/driver_abi.md carries between its
// function-index markers. //tests/driver_abi:function_index_test keeps the
// page equal to it; `bazel run //tools/driver_abi_index` prints it.
#ifndef OPENREG_TOOLS_DRIVER_ABI_INDEX_FUNCTION_INDEX_H_
#define OPENREG_TOOLS_DRIVER_ABI_INDEX_FUNCTION_INDEX_H_

#include <string>

#include "absl/strings/string_view.h"

namespace openreg {

// The lines that mark the index in docs/driver_abi.md.
inline constexpr absl::string_view kFunctionIndexBegin =
    "<!-- function index: generated from OPENREG_DRIVER_FUNCTIONS by "
    "`bazel run //tools/driver_abi_index`; do not edit -->";
inline constexpr absl::string_view kFunctionIndexEnd =
    "<!-- end of function index -->";

// The table: one row per function in table order, with its parameter names,
// the version that added it and whether a driver must provide it.
std::string FunctionIndexMarkdown();

// "(openreg_context context, const void* ptr)" -> "context, ptr".
std::string ParameterNames(absl::string_view parenthesized_params);

}  // namespace openreg

#endif  // OPENREG_TOOLS_DRIVER_ABI_INDEX_FUNCTION_INDEX_H_
