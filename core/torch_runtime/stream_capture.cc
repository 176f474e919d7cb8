#include "core/torch_runtime/stream_capture.h"

#include <c10/util/Exception.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/runtime/capture/capture_registry.h"
#include "core/runtime/runtime.h"
#include "core/torch_runtime/generator.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {
namespace {

CaptureRegistry& Registry() { return CaptureRegistry::Get(); }

constexpr absl::string_view kWaitsForRecordedWork =
    "it would wait for work that is only being recorded, not run";

std::string ForbiddenMessage(c10::DeviceIndex device, absl::string_view what,
                             absl::string_view why) {
  return absl::StrCat(
      "openreg: ", what,
      " is not allowed while openreg:", static_cast<int>(device),
      " is capturing a graph: ", why,
      ". The capture has been abandoned (capture_end ends it without a graph; "
      "replay raises) and the device runs work eagerly again. Move this call "
      "out of the captured region.");
}

// A recording the capture refused: it was abandoned by another thread.
void ThrowIfRecordingFailed(const absl::Status& status) {
  TORCH_CHECK(status.ok(),
              "openreg: recording into a graph failed: ", status.message());
}

// A graph records one device's work: its memory comes from that device's
// private pool and its replay launches on that device's streams (as a
// torch.cuda.CUDAGraph belongs to the device it was captured on).
[[noreturn]] void AbandonCrossDeviceJoin(CapturedGraph& graph,
                                        c10::DeviceIndex device) {
  const std::string message = absl::StrCat(
      "openreg: a stream of openreg:", static_cast<int>(device),
      " waited for work captured on openreg:", graph.device(),
      " (e.g. a copy between the two devices inside the captured region); a "
      "graph records the work of one device only. The capture has been "
      "abandoned (capture_end ends it without a graph; replay raises) and "
      "both devices run work eagerly again. Do cross-device copies before or "
      "after the captured region, or capture one graph per device.");
  graph.Abandon(message);
  Registry().End(graph);
  TORCH_CHECK(false, message);
}

bool IsPinnedHost(const Driver& driver, const void* ptr) {
  absl::StatusOr<PointerAttributes> attributes =
      driver.GetPointerAttributes(ptr);
  return attributes.ok() && attributes->memory_type == OPENREG_MEMORY_TYPE_HOST;
}

}  // namespace

bool IsCapturing(openreg_stream stream) {
  if (!Registry().AnyCapturing()) return false;
  return Registry().GraphOf(stream) != nullptr;
}

bool RecordWorkIfCapturing(openreg_stream stream, absl::string_view op_name,
                           absl::AnyInvocable<void()>& work) {
  if (!Registry().AnyCapturing()) return false;
  std::shared_ptr<CapturedGraph> graph = Registry().GraphOf(stream);
  if (graph == nullptr) return false;
  ThrowIfRecordingFailed(graph->AddWork(stream, op_name, std::move(work)));
  return true;
}

void ForbidWhileCapturing(c10::DeviceIndex device, openreg_stream stream,
                          absl::string_view what) {
  RefuseWhileCapturing(device, stream, what, kWaitsForRecordedWork);
}

void RefuseWhileCapturing(c10::DeviceIndex device, openreg_stream stream,
                          absl::string_view what, absl::string_view why) {
  if (!Registry().AnyCapturing()) return;
  const std::string message = ForbiddenMessage(device, what, why);
  const bool abandoned = stream != nullptr
                             ? Registry().AbandonCaptureOf(stream, message)
                             : Registry().AbandonCapturesOn(device, message);
  TORCH_CHECK(!abandoned, message);
}

void ForbidIfEventCaptured(openreg_event event, absl::string_view what) {
  if (!Registry().AnyCapturing()) return;
  std::shared_ptr<CapturedGraph> graph = Registry().GraphWithEvent(event);
  if (graph == nullptr) return;
  const std::string message =
      ForbiddenMessage(graph->device(), what, kWaitsForRecordedWork);
  graph->Abandon(message);
  Registry().End(*graph);
  TORCH_CHECK(false, message);
}

void EnqueueCopy(c10::DeviceIndex device, openreg_stream stream, void* dst,
                 const void* src, size_t bytes, CopyKind kind) {
  if (bytes == 0) return;
  const Runtime& runtime = RuntimeForDevice(device);
  std::shared_ptr<CapturedGraph> graph = Registry().GraphOf(stream);
  if (graph == nullptr) {
    // After every loop enqueued so far (Note [One launch per foreach call]).
    LaunchGatheredWork();
    ThrowIfError(runtime.driver().MemcpyAsync(dst, src, bytes, kind, stream));
    return;
  }
  const bool host_source = kind == CopyKind::kHostToDevice;
  const bool host_destination = kind == CopyKind::kDeviceToHost;
  if ((host_source && !IsPinnedHost(runtime.driver(), src)) ||
      (host_destination && !IsPinnedHost(runtime.driver(), dst))) {
    ForbidWhileCapturing(
        device, stream,
        host_destination
            ? "a copy to pageable host memory (.item(), .cpu(), .tolist(), "
              "printing a tensor...)"
            : "a copy from pageable host memory (use pinned memory: "
              "tensor.pin_memory())");
  }
  // Inside a replay's launch the copy is a plain memory copy at the
  // addresses code on the driver's threads uses.
  const intptr_t offset = runtime.execution_offset(device);
  CapturedCopy copy;
  copy.dst = static_cast<char*>(dst) + (host_destination ? 0 : offset);
  copy.src = static_cast<const char*>(src) + (host_source ? 0 : offset);
  copy.bytes = bytes;
  copy.kind = static_cast<int32_t>(kind);
  ThrowIfRecordingFailed(graph->AddCopy(stream, copy));
}

void RecordEventOn(c10::DeviceIndex device, openreg_event event,
                   openreg_stream stream) {
  // After every loop enqueued so far (Note [One launch per foreach call]).
  LaunchGatheredWork();
  if (std::shared_ptr<CapturedGraph> graph = Registry().GraphOf(stream)) {
    ThrowIfRecordingFailed(graph->AddEventRecord(stream, event));
    return;
  }
  ForgetCapturedEvent(event);
  ThrowIfError(RuntimeForDevice(device).driver().EventRecord(event, stream));
}

void ForgetCapturedEvent(openreg_event event) {
  if (!Registry().AnyCapturing()) return;
  if (std::shared_ptr<CapturedGraph> graph = Registry().GraphWithEvent(event)) {
    graph->ForgetEvent(event);
  }
}

void WaitEventOn(c10::DeviceIndex device, openreg_stream stream,
                 openreg_event event) {
  LaunchGatheredWork();
  if (std::shared_ptr<CapturedGraph> graph = Registry().GraphWithEvent(event)) {
    // A stream that waits for captured work joins the capture, as on CUDA.
    if (Registry().GraphOf(stream) == nullptr) {
      if (device != graph->device()) AbandonCrossDeviceJoin(*graph, device);
      Registry().Join(stream, device, graph);
    }
    ThrowIfRecordingFailed(graph->AddEventWait(stream, device, event));
    return;
  }
  // An event from before the capture orders nothing inside the graph: a
  // capturing stream's real wait is harmless (it has no real work).
  ThrowIfError(
      RuntimeForDevice(device).driver().StreamWaitEvent(stream, event));
}

std::optional<PrivatePoolId> CapturePoolOf(c10::DeviceIndex device) {
  if (!Registry().AnyCapturing()) return std::nullopt;
  std::shared_ptr<CapturedGraph> graph =
      Registry().GraphOf(CurrentDriverStream(device));
  if (graph == nullptr) return std::nullopt;
  return graph->pool();
}

void RecordRandomnessIfCapturing(c10::DeviceIndex device,
                                 const at::Generator& device_generator,
                                 const at::Generator& kernel_generator) {
  if (!Registry().AnyCapturing()) return;
  std::shared_ptr<CapturedGraph> graph =
      Registry().GraphOf(CurrentDriverStream(device));
  if (graph == nullptr) return;
  CapturedRandomness randomness;
  randomness.draw = [device_generator] {
    return DrawKernelSeed(device_generator);
  };
  randomness.reseed =
      [generator = at::Generator(kernel_generator)](uint64_t seed) mutable {
        generator.set_current_seed(seed);
      };
  ThrowIfRecordingFailed(graph->AddRandomness(std::move(randomness)));
}

bool RecordReplayIssueIfCapturing(openreg_stream stream,
                                  std::function<void()> issue) {
  if (!Registry().AnyCapturing()) return false;
  std::shared_ptr<CapturedGraph> graph = Registry().GraphOf(stream);
  if (graph == nullptr) return false;
  ThrowIfRecordingFailed(graph->AddReplayIssue(std::move(issue)));
  return true;
}

}  // namespace openreg
