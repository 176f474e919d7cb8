// The process's one warning that profiling sees no device activity because
// the driver lacks the activity-recording group (ABI 2.2). Kineto's
// configure (kineto_session.cc) issues it; the Python bindings route it to
// Python's warnings module (once_warning.h says why).
#ifndef OPENREG_CORE_PROFILER_MISSING_ACTIVITY_WARNING_H_
#define OPENREG_CORE_PROFILER_MISSING_ACTIVITY_WARNING_H_

#include "core/profiler/once_warning.h"

namespace openreg::profiler {

// Until a sink is set it goes to c10's warning handler (stderr), which is
// where a process using the core without the Python bindings sees it.
OnceWarning& MissingActivityWarning();

}  // namespace openreg::profiler

#endif  // OPENREG_CORE_PROFILER_MISSING_ACTIVITY_WARNING_H_
