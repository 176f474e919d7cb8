// Linked into the tests of this folder: maps every working driver they load
// once more at startup and never unmaps it, so a driver stays loaded for the
// whole test process, as the core keeps its driver for the life of the
// process. The drivers keep process-wide objects that are deliberately never
// freed (registries of their live contexts, which must outlive static
// destructors); once a DriverLibrary unloaded a driver, nothing would point
// at them any more and LeakSanitizer (--config=asan) would report them.
#include <dlfcn.h>

#include "tests/core/driver/test_paths.h"

namespace openreg {
namespace {

const bool kDriversMapped = [] {
  for (const std::string& path :
       {std::string(kMinimalPath), std::string(kMinimalV1Path),
        ShippedDriverPath("cpu_sim"), ShippedDriverPath("threaded_sim")}) {
    // A test that does not use a driver does not have it: nothing to keep.
    dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  return true;
}();

}  // namespace
}  // namespace openreg
