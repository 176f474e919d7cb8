#include "bindings/memory_snapshot.h"

#include <torch/csrc/Export.h>
#include <torch/csrc/profiler/combined_traceback.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/torch_runtime/memory_recording.h"

// Exported by libtorch_python. Its header,
// torch/csrc/profiler/python/combined_traceback.h, also includes
// nlohmann/json.hpp, which torch's wheel does not ship, so the two functions
// used here are declared as that header declares them.
namespace torch {
TORCH_API std::vector<pybind11::object> py_symbolize(
    std::vector<CapturedTraceback*>& to_symbolize);
TORCH_PYTHON_API void installCapturedTracebackPython();
}  // namespace torch

namespace openreg {
namespace {

namespace py = pybind11;

// Symbolizes every stack of a snapshot in one call to torch (which shares
// the work across stacks with common frames) and hands out the frame lists.
class Frames {
 public:
  void Add(const std::shared_ptr<void>& frames) {
    if (frames == nullptr) return;
    auto* traceback = static_cast<torch::CapturedTraceback*>(frames.get());
    if (index_.emplace(traceback, tracebacks_.size()).second) {
      tracebacks_.push_back(traceback);
    }
  }
  void Symbolize() { symbolized_ = torch::py_symbolize(tracebacks_); }
  // The frames of `frames` (added before), or an empty list.
  py::object Of(const std::shared_ptr<void>& frames) const {
    if (frames == nullptr) return py::list();
    return symbolized_[index_.at(
        static_cast<torch::CapturedTraceback*>(frames.get()))];
  }

 private:
  absl::flat_hash_map<torch::CapturedTraceback*, size_t> index_;
  std::vector<torch::CapturedTraceback*> tracebacks_;
  std::vector<py::object> symbolized_;
};

const char* StateName(BlockState state) {
  switch (state) {
    case BlockState::kAllocated:
      return "active_allocated";
    case BlockState::kAwaitingEvents:
    case BlockState::kUntracked:
      return "active_pending_free";
    case BlockState::kFree:
    case BlockState::kFreeUnmerged:
      return "inactive";
  }
  return "unknown";
}

py::tuple PoolId(const PrivatePoolId& pool) {
  return py::make_tuple(pool.first, pool.second);
}

py::dict SegmentDict(const SegmentSnapshot& segment, const Frames& frames) {
  py::dict result;
  result["device"] = segment.device;
  result["address"] = segment.address;
  result["total_size"] = segment.total_size;
  result["allocated_size"] = segment.allocated_size;
  result["active_size"] = segment.active_size;
  result["requested_size"] = segment.requested_size;
  result["stream"] = segment.stream;
  result["segment_type"] = segment.small ? "small" : "large";
  result["segment_pool_id"] = PoolId(segment.pool);
  result["is_expandable"] = false;
  result["frames"] = frames.Of(segment.frames);
  py::list blocks;
  for (const BlockSnapshot& block : segment.blocks) {
    py::dict entry;
    entry["address"] = block.address;
    entry["size"] = block.size;
    entry["requested_size"] = block.requested;
    entry["state"] = StateName(block.state);
    entry["frames"] = frames.Of(block.frames);
    blocks.append(entry);
  }
  result["blocks"] = blocks;
  return result;
}

py::dict TraceEntryDict(const TraceEntry& entry, const Frames& frames) {
  py::dict result;
  result["action"] = TraceActionName(entry.action);
  if (entry.action == TraceAction::kOom) {
    result["device_free"] = entry.device_free;
  } else {
    result["addr"] = entry.address;
  }
  result["size"] = entry.size;
  result["stream"] = entry.stream;
  result["time_us"] = entry.time_us;
  result["pool_id"] = PoolId(entry.pool);
  result["frames"] = frames.Of(entry.frames);
  return result;
}

py::dict SettingsDict(const AllocatorConfig& config) {
  py::dict result;
  result["max_split_size"] = config.has_max_split_size()
                                 ? static_cast<int64_t>(config.max_split_size)
                                 : int64_t{-1};
  result["release_on_oom"] = config.release_on_oom;
  result["expandable_segments"] = false;
  return result;
}

py::dict SnapshotDict() {
  const MemorySnapshot snapshot = [] {
    py::gil_scoped_release no_gil;  // the pools' locks may be contended
    return TakeMemorySnapshot();
  }();
  Frames frames;
  for (const SegmentSnapshot& segment : snapshot.segments) {
    frames.Add(segment.frames);
    for (const BlockSnapshot& block : segment.blocks) frames.Add(block.frames);
  }
  for (const auto& trace : snapshot.device_traces) {
    for (const TraceEntry& entry : trace) frames.Add(entry.frames);
  }
  frames.Symbolize();
  py::list segments;
  for (const SegmentSnapshot& segment : snapshot.segments) {
    segments.append(SegmentDict(segment, frames));
  }
  py::list device_traces;
  for (const auto& trace : snapshot.device_traces) {
    py::list entries;
    for (const TraceEntry& entry : trace) {
      entries.append(TraceEntryDict(entry, frames));
    }
    device_traces.append(entries);
  }
  py::dict result;
  result["segments"] = segments;
  result["device_traces"] = device_traces;
  result["allocator_settings"] = SettingsDict(snapshot.settings);
  return result;
}

}  // namespace

void RegisterMemorySnapshotBindings(py::module& module) {
  // Arguments validated by torch_openreg.openreg.memory, which documents
  // them; `context` is 0 (never) to 3 (all), as ContextWhen; `skip` names
  // actions not to record.
  module.def(
      "_record_memory_history",
      [](bool enabled, bool record_trace, int context, bool python, bool cpp,
         uint64_t max_entries, const std::vector<std::string>& skip) {
        if (context < static_cast<int>(ContextWhen::kNever) ||
            context > static_cast<int>(ContextWhen::kAll)) {
          throw py::value_error("context must be 0 (never) to 3 (all), got " +
                                std::to_string(context));
        }
        if (enabled && record_trace && max_entries == 0) {
          throw py::value_error(
              "max_entries must be at least 1 when recording the trace, got 0");
        }
        RecordingOptions options;
        options.enabled = enabled;
        options.settings.record_trace = record_trace;
        options.settings.context = static_cast<ContextWhen>(context);
        options.settings.max_entries = static_cast<size_t>(max_entries);
        options.python_frames = python;
        options.cpp_frames = cpp;
        for (const std::string& name : skip) {
          int action = 0;
          while (action < kTraceActionCount &&
                 name != TraceActionName(static_cast<TraceAction>(action))) {
            ++action;
          }
          if (action == kTraceActionCount) {
            throw py::value_error("unknown action in skip_actions: '" + name +
                                  "'");
          }
          options.settings.skipped_actions |= uint32_t{1} << action;
        }
        if (enabled && python) torch::installCapturedTracebackPython();
        py::gil_scoped_release no_gil;
        RecordMemoryHistory(options);
      });
  module.def("_memory_snapshot", &SnapshotDict);
}

}  // namespace openreg
