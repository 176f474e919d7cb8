#include "core/torch_runtime/backward_thread.h"

#include <c10/core/AutogradState.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/engine.h>

#include "core/torch_runtime/autograd_thread_workers.h"

namespace openreg {
namespace {

// The engine starts its device threads once per process; later calls return
// at once. Never called from inside that start: the engine runs no op while
// it starts its threads, and this runs only after a launch.
void StartAutogradDeviceThreads() {
  try {
    torch::autograd::Engine::get_default_engine()
        .initialize_device_threads_pool();
  } catch (const c10::Error&) {
    // A child forked after the parent's engine started: its first backward
    // pass raises the engine's own error, which says what to do.
  }
}

}  // namespace

void NoteWorkRanInlineOnThisThread() {
  thread_local bool decided = false;
  if (decided) return;
  decided = true;
  if (OnAutogradDeviceThread()) return;
  c10::AutogradState::get_tls_state().set_multithreading_enabled(false);
  StartAutogradDeviceThreads();
}

}  // namespace openreg
