#include "core/profiler/missing_activity_warning.h"

#include <string>

#include "c10/util/Exception.h"

namespace openreg::profiler {

OnceWarning& MissingActivityWarning() {
  // Never destroyed: a profiler may still be configured while the process
  // exits.
  static OnceWarning* const warning =
      new OnceWarning([](const std::string& message) { TORCH_WARN(message); });
  return *warning;
}

}  // namespace openreg::profiler
