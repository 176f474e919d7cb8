#include "core/profiler/once_warning.h"

#include <utility>

namespace openreg::profiler {

void OnceWarning::SetSink(Sink sink) {
  absl::MutexLock lock(&mu_);
  sink_ = std::move(sink);
}

bool OnceWarning::Warn(const std::string& message) {
  Sink sink;
  {
    absl::MutexLock lock(&mu_);
    if (issued_) return false;
    issued_ = true;
    sink = sink_;
  }
  sink(message);
  return true;
}

}  // namespace openreg::profiler
