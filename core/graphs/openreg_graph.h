// PyTorch's device-generic graph (at::GraphImplInterface, behind
// torch.accelerator.Graph and torch.openreg.Graph) on openreg: capture
// records the work the core enqueues (Note [Graph capture]), replay launches
// it once per stream segment on the replaying thread's current stream.
//
// Ownership: a graph owns its recording (and through it every storage the
// captured work touches, so that memory lives as long as the graph), the
// streams and events a multi-stream replay uses, and one use of its private
// memory pool, released by reset() or destruction.
//
// Thread-safety: like PyTorch's CUDA graphs, one graph object is used by one
// thread at a time; different graphs may capture or replay concurrently.
#ifndef OPENREG_CORE_GRAPHS_OPENREG_GRAPH_H_
#define OPENREG_CORE_GRAPHS_OPENREG_GRAPH_H_

#include <ATen/core/GraphImplInterface.h>

#include <memory>
#include <optional>
#include <string>

#include "core/runtime/capture/captured_graph.h"

namespace openreg {

class OpenRegGraph final : public at::GraphImplInterface {
 public:
  explicit OpenRegGraph(const at::GraphImplArgs& args);
  ~OpenRegGraph() override;

  void capture_begin(c10::MempoolId_t pool, at::GraphCaptureMode mode) override;
  void capture_end() override;
  void instantiate() override;
  void replay() override;
  void reset() override;
  c10::MempoolId_t pool() const override;
  void enable_debug_mode() override;
  void debug_dump(const std::string& path) override;

 private:
  // What a replay needs besides the recording: the streams standing in for
  // the captured side streams and the graph's events. Shared with in-flight
  // replays, so they outlive a graph destroyed while a replay runs.
  struct Executable;

  void ReleasePool();

  const bool keep_graph_;
  bool debug_ = false;
  std::optional<c10::MempoolId_t> pool_;    // while a use of it is held
  c10::DeviceIndex pool_device_ = 0;        // the device of pool_
  std::shared_ptr<CapturedGraph> capture_;  // while capturing
  std::shared_ptr<CapturedGraph> graph_;    // after a successful capture_end
  std::shared_ptr<Executable> executable_;  // after instantiate
  std::optional<std::string> abandoned_;    // why the last capture failed
};

// Whether the calling thread's current stream of the current device is
// capturing a graph (torch.openreg.is_current_stream_capturing).
bool IsCurrentStreamCapturing();

}  // namespace openreg

#endif  // OPENREG_CORE_GRAPHS_OPENREG_GRAPH_H_
