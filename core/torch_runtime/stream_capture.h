// The core's enqueue paths during graph capture (Note [Graph capture]): work,
// copies and event records/waits on a capturing stream are recorded into its
// graph instead of reaching the driver, and anything that would wait for
// captured work raises and abandons the capture.
//
// Thread-safety: every function may be called from any user thread.
#ifndef OPENREG_CORE_TORCH_RUNTIME_STREAM_CAPTURE_H_
#define OPENREG_CORE_TORCH_RUNTIME_STREAM_CAPTURE_H_

#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

#include <functional>
#include <optional>

#include "absl/functional/any_invocable.h"
#include "absl/strings/string_view.h"
#include "core/driver/driver.h"
#include "core/runtime/memory/caching_device_allocator.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

// Whether `stream` captures a graph. One atomic load when nothing captures.
bool IsCapturing(openreg_stream stream);

// Records `work` into the graph `stream` captures, if it does; returns
// whether it did (else `work` is untouched).
bool RecordWorkIfCapturing(openreg_stream stream, absl::string_view op_name,
                           absl::AnyInvocable<void()>& work);

// Raises a RuntimeError naming `what` if `stream` captures (when null: if
// any stream of `device` does), after abandoning that capture so that the
// device runs work eagerly again.
void ForbidWhileCapturing(c10::DeviceIndex device, openreg_stream stream,
                          absl::string_view what);

// The same for work the capture cannot record, for the reason `why` (a
// clause: "<what> is not allowed while ... capturing a graph: <why>. ...").
void RefuseWhileCapturing(c10::DeviceIndex device, openreg_stream stream,
                          absl::string_view what, absl::string_view why);

// The same for an event recorded by a capture underway.
void ForbidIfEventCaptured(openreg_event event, absl::string_view what);

// Copies `bytes` on `stream` in stream order (the driver's memcpy), or
// records the copy when `stream` captures. During capture, host memory
// must be pinned: a pageable copy would be synchronous.
void EnqueueCopy(c10::DeviceIndex device, openreg_stream stream, void* dst,
                 const void* src, size_t bytes, CopyKind kind);

// Records `event` on `stream`, or into `stream`'s capture.
void RecordEventOn(c10::DeviceIndex device, openreg_event event,
                   openreg_stream stream);
// `event` is being destroyed: a capture must not mistake a new event with
// the same handle for it. Never throws.
void ForgetCapturedEvent(openreg_event event);
// Makes `stream` (of `device`) wait for `event`. Waiting on an event
// recorded in a capture makes `stream` join that capture.
void WaitEventOn(c10::DeviceIndex device, openreg_stream stream,
                 openreg_event event);

// The private pool allocations on `device` come from: that of the graph the
// calling thread's current stream of `device` captures, if any.
std::optional<PrivatePoolId> CapturePoolOf(c10::DeviceIndex device);

// Registers `kernel_generator`, seeded from `device_generator` for a kernel
// recorded on the current stream of `device`, so that every replay reseeds
// it with a fresh draw from `device_generator`. Nothing when not capturing.
void RecordRandomnessIfCapturing(c10::DeviceIndex device,
                                 const at::Generator& device_generator,
                                 const at::Generator& kernel_generator);

// If `stream` captures, registers `issue` to run on the replaying thread at
// every replay, in capture order, and returns true; else returns false
// without running it (Note [Graph capture], host steps per replay).
bool RecordReplayIssueIfCapturing(openreg_stream stream,
                                  std::function<void()> issue);

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_STREAM_CAPTURE_H_
