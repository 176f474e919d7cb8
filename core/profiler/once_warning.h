// A warning issued at most once per OnceWarning, to a sink that can be
// replaced: how profiling on a driver without activity recording tells the
// user, once per process, which feature is missing (docs/profiling.md).
//
// Kineto asks for a profiler session inside torch's _prepare_profiler, which
// releases the GIL and installs no Python warning handler, so a TORCH_WARN
// there only reaches c10's stderr logger. The Python bindings therefore set
// a sink that takes the GIL and issues a Python UserWarning.
//
// Thread-safety: Warn() and SetSink() may be called from any thread; mu_
// guards the sink and whether the warning was issued. The sink runs outside
// mu_, so a sink that takes another lock (the GIL) cannot deadlock against a
// thread that holds that lock and calls Warn().
#ifndef OPENREG_CORE_PROFILER_ONCE_WARNING_H_
#define OPENREG_CORE_PROFILER_ONCE_WARNING_H_

#include <functional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace openreg::profiler {

class OnceWarning {
 public:
  using Sink = std::function<void(const std::string& message)>;

  explicit OnceWarning(Sink sink) : sink_(std::move(sink)) {}
  OnceWarning(const OnceWarning&) = delete;
  OnceWarning& operator=(const OnceWarning&) = delete;

  // Where the warning goes from now on.
  void SetSink(Sink sink);
  // Hands `message` to the sink the first time; later calls do nothing.
  // Returns whether this call issued it.
  bool Warn(const std::string& message);

 private:
  absl::Mutex mu_;
  Sink sink_ ABSL_GUARDED_BY(mu_);
  bool issued_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace openreg::profiler

#endif  // OPENREG_CORE_PROFILER_ONCE_WARNING_H_
