// The PrivateUse1 methods of PyTorch's legacy profiler
// (torch.autograd.profiler.profile(use_device="openreg")): device timestamps
// are timed driver events on the current stream, as CUDA's are CUDA events.
//
// Without them PyTorch's placeholder stubs warn "PrivateUse1 used in profiler
// but not enabled" on every operation and leave the CPU timestamps unset,
// which gave negative times.
//
// Thread-safety: stateless; every method may be called from any thread.
#ifndef OPENREG_CORE_PROFILER_LEGACY_STUBS_H_
#define OPENREG_CORE_PROFILER_LEGACY_STUBS_H_

#include <torch/csrc/profiler/stubs/base.h>

#include <functional>

namespace openreg::profiler {

class LegacyProfilerStubs final : public torch::profiler::impl::ProfilerStubs {
 public:
  // Records a timed event on the current stream of the current device and
  // the CPU time next to it.
  void record(c10::DeviceIndex* device,
              torch::profiler::impl::ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override;
  // Microseconds from `start` to `end`, once both completed.
  float elapsed(
      const torch::profiler::impl::ProfilerVoidEventStub* start,
      const torch::profiler::impl::ProfilerVoidEventStub* end) const override;
  // openreg has no range annotations (NVTX's role); marks and ranges appear
  // in the CPU trace through record_function already.
  void mark(const char* name) const override {}
  void rangePush(const char* name) const override {}
  void rangePop() const override {}
  bool enabled() const override { return true; }
  void onEachDevice(std::function<void(int)> op) const override;
  void synchronize() const override;
};

}  // namespace openreg::profiler

#endif  // OPENREG_CORE_PROFILER_LEGACY_STUBS_H_
