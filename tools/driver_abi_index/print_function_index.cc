// Prints docs/driver_abi.md's function index, markers included, for pasting
// over the old one after a change to OPENREG_DRIVER_FUNCTIONS.
#include <iostream>

#include "tools/driver_abi_index/function_index.h"

int main() {
  std::cout << openreg::kFunctionIndexBegin << "\n\n"
            << openreg::FunctionIndexMarkdown() << "\n"
            << openreg::kFunctionIndexEnd << "\n";
  return 0;
}
