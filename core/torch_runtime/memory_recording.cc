#include "core/torch_runtime/memory_recording.h"

#include <torch/csrc/profiler/combined_traceback.h>

#include <memory>

#include "core/runtime/runtime.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {

void RecordMemoryHistory(const RecordingOptions& options) {
  CachingDeviceAllocator& memory = RuntimeOrThrow().device_memory();
  if (!options.enabled) {
    memory.DisableHistory();
    return;
  }
  const bool python = options.python_frames;
  const bool cpp = options.cpp_frames;
  memory.EnableHistory(
      options.settings, [python, cpp](int32_t device, bool with_frames) {
        HistoryContext context;
        context.stream = reinterpret_cast<uintptr_t>(
            CurrentDriverStream(static_cast<c10::DeviceIndex>(device)));
        if (with_frames) {
          // Work running on a driver thread has no Python caller, and taking
          // the GIL there could wait for a thread that waits for this work.
          context.frames = torch::CapturedTraceback::gather(
              python && !InsideEnqueuedWork(), /*script=*/false, cpp);
        }
        return context;
      });
}

MemorySnapshot TakeMemorySnapshot() {
  if (!Runtime::IsInitialized()) return MemorySnapshot();
  return RuntimeOrThrow().device_memory().Snapshot();
}

}  // namespace openreg
