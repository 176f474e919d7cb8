#include "core/runtime/capture/capture_registry.h"

#include <utility>
#include <vector>

namespace openreg {

CaptureRegistry& CaptureRegistry::Get() {
  static auto* registry = new CaptureRegistry();  // never destroyed
  return *registry;
}

std::shared_ptr<CapturedGraph> CaptureRegistry::GraphOf(
    openreg_stream stream) const {
  if (!AnyCapturing()) return nullptr;
  absl::MutexLock lock(&mutex_);
  auto it = streams_.find(stream);
  return it == streams_.end() ? nullptr : it->second.graph;
}

std::shared_ptr<CapturedGraph> CaptureRegistry::GraphOnDevice(
    int32_t device) const {
  if (!AnyCapturing()) return nullptr;
  absl::MutexLock lock(&mutex_);
  for (const auto& [stream, entry] : streams_) {
    if (entry.device == device) return entry.graph;
  }
  return nullptr;
}

std::shared_ptr<CapturedGraph> CaptureRegistry::GraphWithEvent(
    openreg_event event) const {
  if (!AnyCapturing()) return nullptr;
  absl::MutexLock lock(&mutex_);
  for (const auto& [stream, entry] : streams_) {
    if (entry.graph->HasEvent(event)) return entry.graph;
  }
  return nullptr;
}

absl::Status CaptureRegistry::Begin(openreg_stream stream, int32_t device,
                                    std::shared_ptr<CapturedGraph> graph) {
  absl::MutexLock lock(&mutex_);
  if (streams_.contains(stream)) {
    return absl::FailedPreconditionError(
        "capture_begin: the current stream is already capturing a graph; end "
        "that capture first, or capture on another stream");
  }
  streams_.emplace(stream, Entry{device, std::move(graph)});
  capturing_.store(streams_.size(), std::memory_order_relaxed);
  return absl::OkStatus();
}

void CaptureRegistry::Join(openreg_stream stream, int32_t device,
                           std::shared_ptr<CapturedGraph> graph) {
  absl::MutexLock lock(&mutex_);
  streams_.try_emplace(stream, Entry{device, std::move(graph)});
  capturing_.store(streams_.size(), std::memory_order_relaxed);
}

void CaptureRegistry::End(const CapturedGraph& graph) {
  std::vector<std::shared_ptr<CapturedGraph>> released;
  absl::MutexLock lock(&mutex_);
  for (auto it = streams_.begin(); it != streams_.end();) {
    if (it->second.graph.get() == &graph) {
      released.push_back(std::move(it->second.graph));
      streams_.erase(it++);
    } else {
      ++it;
    }
  }
  capturing_.store(streams_.size(), std::memory_order_relaxed);
}

bool CaptureRegistry::AbandonCaptureOf(openreg_stream stream,
                                       const std::string& reason) {
  std::shared_ptr<CapturedGraph> graph = GraphOf(stream);
  if (graph == nullptr) return false;
  graph->Abandon(reason);
  End(*graph);
  return true;
}

bool CaptureRegistry::AbandonCapturesOn(int32_t device,
                                        const std::string& reason) {
  bool any = false;
  while (std::shared_ptr<CapturedGraph> graph = GraphOnDevice(device)) {
    graph->Abandon(reason);
    End(*graph);
    any = true;
  }
  return any;
}

}  // namespace openreg
