// torch.openreg.memory._record_memory_history on the torch side: installs the
// gatherer that captures stacks (torch::CapturedTraceback, Python and C++
// frames, as CUDA's allocator does) and the current stream for the caching
// allocator's history (Note [Memory history]).
//
// Thread-safety: may be called from any thread; the allocator's histories
// do their own locking.
#ifndef OPENREG_CORE_TORCH_RUNTIME_MEMORY_RECORDING_H_
#define OPENREG_CORE_TORCH_RUNTIME_MEMORY_RECORDING_H_

#include <cstddef>

#include "core/runtime/memory/memory_history.h"
#include "core/runtime/memory/memory_snapshot.h"

namespace openreg {

struct RecordingOptions {
  bool enabled = false;       // false stops recording and drops the trace
  HistorySettings settings;   // when enabled
  bool python_frames = true;  // stacks="python" or "all"
  bool cpp_frames = false;    // stacks="all"
};

// Applies to every device. Python frames also need the bindings to have
// installed torch's Python unwinder (torch::installCapturedTracebackPython).
void RecordMemoryHistory(const RecordingOptions& options);

// The allocator's state; an empty snapshot before the runtime exists. Its
// frames are torch::CapturedTraceback objects.
MemorySnapshot TakeMemorySnapshot();

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_MEMORY_RECORDING_H_
