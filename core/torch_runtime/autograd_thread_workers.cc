#include "core/torch_runtime/autograd_thread_workers.h"

#include <ATen/ops/empty.h>
#include <c10/util/thread_name.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>

#include <array>
#include <atomic>
#include <exception>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/runtime/runtime_config.h"
#include "third_party/openmp/thread_workers.h"

namespace openreg {
namespace {

// Long enough that a training loop keeps its pools between steps, short
// enough that CPU work after it soon runs at full speed.
constexpr absl::Duration kIdleBeforeRelease = absl::Milliseconds(50);

// The node of the one-node graph: runs on the device's autograd thread.
class ReleaseWorkersNode final : public torch::autograd::Node {
 public:
  torch::autograd::variable_list apply(
      torch::autograd::variable_list&& /*grads*/) override {
    openmp::ReleaseCallingThreadWorkers();
    return {};
  }
  std::string name() const override { return "openreg::ReleaseWorkersNode"; }
};

class AutogradThreadWorkerReleaser {
 public:
  void NoteWork(c10::DeviceIndex device) {
    work_[device].fetch_add(1);
    if (idle_.load()) Wake();
  }

 private:
  void Wake() {
    absl::MutexLock lock(&mutex_);
    idle_.store(false);
    if (!started_ && !stopping_) {
      started_ = true;
      std::thread([this] { Run(); }).detach();
    }
  }

 public:
  void Stop() {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
    // Waits for a release in progress; the thread then exits.
    if (started_) mutex_.Await(absl::Condition(&exited_));
  }

 private:
  // Returns false when Stop() was called.
  bool SleepUnlessStopping(absl::Duration duration) {
    absl::MutexLock lock(&mutex_);
    return !mutex_.AwaitWithTimeout(absl::Condition(&stopping_), duration);
  }

  void Run() {
    c10::setThreadName("openreg_release");
    std::array<uint64_t, kMaxDeviceCount> seen{};
    std::array<uint64_t, kMaxDeviceCount> released{};
    while (true) {
      {
        absl::MutexLock lock(&mutex_);
        mutex_.Await(absl::Condition(
            +[](AutogradThreadWorkerReleaser* self) {
              self->mutex_.AssertHeld();
              return self->stopping_ || !self->idle_.load();
            },
            this));
        if (stopping_) break;
      }
      if (!SleepUnlessStopping(kIdleBeforeRelease)) break;
      bool busy = false;
      for (int device = 0; device < kMaxDeviceCount; ++device) {
        const uint64_t work = work_[device].load();
        if (work == released[device]) continue;
        if (work != seen[device]) {  // worked during the last interval
          seen[device] = work;
          busy = true;
          continue;
        }
        ReleaseOnAutogradThread(static_cast<c10::DeviceIndex>(device));
        released[device] = work;
      }
      if (!busy) {
        // Idle unless work arrived meanwhile: NoteWork increments before it
        // reads idle_, and this reads the counters after writing it.
        idle_.store(true);
        for (int device = 0; device < kMaxDeviceCount; ++device) {
          if (work_[device].load() != released[device]) {
            idle_.store(false);
            break;
          }
        }
      }
    }
    absl::MutexLock lock(&mutex_);
    exited_ = true;
  }

  static void ReleaseOnAutogradThread(c10::DeviceIndex device) {
    try {
      const at::Tensor input = at::empty(
          {}, c10::TensorOptions().device(c10::DeviceType::PrivateUse1, device));
      c10::intrusive_ptr<torch::autograd::Node> node =
          c10::make_intrusive<ReleaseWorkersNode>();
      node->add_input_metadata(input);
      torch::autograd::Engine::get_default_engine().execute(
          {torch::autograd::Edge(std::move(node), 0)}, {input},
          /*keep_graph=*/false, /*create_graph=*/false,
          // The graph has no leaves, so nothing accumulates; the engine asks
          // for either this or explicit outputs.
          /*accumulate_grad=*/true);
    } catch (const std::exception& error) {
      // Only speed is at stake: CPU work keeps paying for the pool.
      TORCH_WARN_ONCE("openreg could not release the OpenMP workers of the "
                      "autograd thread of openreg:",
                      static_cast<int>(device),
                      "; CPU work may run slower while they stay: ",
                      error.what());
    }
  }

 public:
  static AutogradThreadWorkerReleaser& Get() {
    static auto* releaser = new AutogradThreadWorkerReleaser();  // never destroyed
    return *releaser;
  }

 private:
  std::array<std::atomic<uint64_t>, kMaxDeviceCount> work_{};
  // No unreleased work: the releaser thread sleeps until NoteWork.
  std::atomic<bool> idle_{true};
  absl::Mutex mutex_;
  bool started_ ABSL_GUARDED_BY(mutex_) = false;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  bool exited_ ABSL_GUARDED_BY(mutex_) = false;
};

}  // namespace

void StopReleasingAutogradThreadWorkers() {
  AutogradThreadWorkerReleaser::Get().Stop();
}

bool OnAutogradDeviceThread() {
  // PyTorch names the threads its autograd engine starts for devices
  // "pt_autograd_<index>" (torch/csrc/autograd/engine.cpp).
  thread_local const bool on_autograd_thread =
      c10::getThreadName().rfind("pt_autograd_", 0) == 0;
  return on_autograd_thread;
}

void NoteWorkOnThisThread(c10::DeviceIndex device) {
  if (OnAutogradDeviceThread()) AutogradThreadWorkerReleaser::Get().NoteWork(device);
}

}  // namespace openreg
