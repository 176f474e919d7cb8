// Registers openreg with both of PyTorch's profilers: the Kineto activity
// profiler for PrivateUse1 (kineto_session.h), which torch.profiler uses,
// and the legacy profiler's device methods (legacy_stubs.h).
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include "core/profiler/kineto_session.h"
#include "core/profiler/legacy_stubs.h"

namespace openreg::profiler {
namespace {

REGISTER_PRIVATEUSE1_PROFILER(OpenregActivityProfiler);

// Static: PyTorch keeps the pointer for the life of the process.
const bool kLegacyStubsRegistered = [] {
  static LegacyProfilerStubs stubs;
  torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  return true;
}();

}  // namespace
}  // namespace openreg::profiler
