#include "core/torch_runtime/backward_thread.h"

#include <c10/core/AutogradState.h>

#include "core/torch_runtime/autograd_thread_workers.h"

namespace openreg {

void NoteWorkRanInlineOnThisThread() {
  thread_local bool decided = false;
  if (decided) return;
  decided = true;
  if (OnAutogradDeviceThread()) return;
  c10::AutogradState::get_tls_state().set_multithreading_enabled(false);
}

}  // namespace openreg
