#include "core/runtime/capture/captured_graph.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace openreg {
namespace {

// std::visit over several lambdas.
template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

const char* CopyKindName(int32_t kind) {
  switch (kind) {
    case OPENREG_MEMCPY_HOST_TO_DEVICE:
      return "host_to_device";
    case OPENREG_MEMCPY_DEVICE_TO_HOST:
      return "device_to_host";
    case OPENREG_MEMCPY_DEVICE_TO_DEVICE:
      return "device_to_device";
    default:
      return "host_to_host";
  }
}

}  // namespace

CapturedGraph::CapturedGraph(openreg_stream origin, int32_t device,
                             std::pair<uint64_t, uint64_t> pool)
    : device_(device), pool_(pool) {
  streams_.push_back(StreamInfo{origin, device});
}

absl::Status CapturedGraph::CheckRecording() const {
  if (abandoned_.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the capture was abandoned: ", *abandoned_));
  }
  if (finished_) {
    return absl::FailedPreconditionError("the capture has already ended");
  }
  return absl::OkStatus();
}

int CapturedGraph::StreamIndex(openreg_stream stream, int32_t device) {
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i].captured == stream) return static_cast<int>(i);
  }
  streams_.push_back(StreamInfo{stream, device});
  return static_cast<int>(streams_.size() - 1);
}

absl::Status CapturedGraph::AddWork(openreg_stream stream,
                                    absl::string_view name,
                                    absl::AnyInvocable<void()> run) {
  absl::MutexLock lock(&mutex_);
  if (absl::Status status = CheckRecording(); !status.ok()) return status;
  Item item;
  // Only capturing streams reach here, and they were added when they began
  // or joined, so the device passed is never used for a new entry.
  item.stream = StreamIndex(stream, device_);
  item.node = CapturedWork{std::string(name), std::move(run)};
  items_.push_back(std::move(item));
  return absl::OkStatus();
}

absl::Status CapturedGraph::AddCopy(openreg_stream stream,
                                    const CapturedCopy& copy) {
  absl::MutexLock lock(&mutex_);
  if (absl::Status status = CheckRecording(); !status.ok()) return status;
  Item item;
  item.stream = StreamIndex(stream, device_);
  item.node = copy;
  items_.push_back(std::move(item));
  return absl::OkStatus();
}

absl::Status CapturedGraph::AddRandomness(CapturedRandomness randomness) {
  absl::MutexLock lock(&mutex_);
  if (absl::Status status = CheckRecording(); !status.ok()) return status;
  randomness_.push_back(std::move(randomness));
  return absl::OkStatus();
}

absl::Status CapturedGraph::AddReplayIssue(std::function<void()> issue) {
  absl::MutexLock lock(&mutex_);
  if (absl::Status status = CheckRecording(); !status.ok()) return status;
  replay_issues_.push_back(std::move(issue));
  return absl::OkStatus();
}

absl::Status CapturedGraph::AddEventRecord(openreg_stream stream,
                                           openreg_event event) {
  absl::MutexLock lock(&mutex_);
  if (absl::Status status = CheckRecording(); !status.ok()) return status;
  Item item;
  item.stream = StreamIndex(stream, device_);
  item.kind = Item::kRecord;
  // A record replaces the event's earlier one: later waits see this one.
  item.event = event_count_++;
  events_[event] = item.event;
  items_.push_back(std::move(item));
  return absl::OkStatus();
}

absl::Status CapturedGraph::AddEventWait(openreg_stream stream, int32_t device,
                                         openreg_event event) {
  absl::MutexLock lock(&mutex_);
  if (absl::Status status = CheckRecording(); !status.ok()) return status;
  auto it = events_.find(event);
  if (it == events_.end()) {
    return absl::InvalidArgumentError(
        "the event was not recorded during this capture");
  }
  Item item;
  item.stream = StreamIndex(stream, device);
  item.kind = Item::kWait;
  item.event = it->second;
  items_.push_back(std::move(item));
  return absl::OkStatus();
}

bool CapturedGraph::HasEvent(openreg_event event) const {
  absl::MutexLock lock(&mutex_);
  return events_.contains(event);
}

void CapturedGraph::ForgetEvent(openreg_event event) {
  absl::MutexLock lock(&mutex_);
  events_.erase(event);
}

void CapturedGraph::Abandon(std::string reason) {
  std::vector<Item> dropped;
  {
    absl::MutexLock lock(&mutex_);
    if (!abandoned_.has_value()) abandoned_ = std::move(reason);
    dropped.swap(items_);
  }
  // The recorded work (and the memory it owns) is released outside the lock.
}

std::optional<std::string> CapturedGraph::abandoned_reason() const {
  absl::MutexLock lock(&mutex_);
  return abandoned_;
}

absl::Status CapturedGraph::CheckJoined() const {
  // Every stream other than the origin must end with a record that the
  // origin waits for after it: else replay would return before its work.
  for (size_t stream = 1; stream < streams_.size(); ++stream) {
    int last = -1;
    for (size_t i = 0; i < items_.size(); ++i) {
      if (items_[i].stream == static_cast<int>(stream)) last = i;
    }
    bool joined = false;
    if (last >= 0 && items_[last].kind == Item::kRecord) {
      for (size_t i = last + 1; i < items_.size() && !joined; ++i) {
        joined = items_[i].stream == 0 && items_[i].kind == Item::kWait &&
                 items_[i].event == items_[last].event;
      }
    }
    if (!joined) {
      return absl::FailedPreconditionError(absl::StrCat(
          "capture_end: a stream joined the capture (by waiting on an event "
          "recorded during it) but the capturing stream did not wait for that "
          "stream's last work; make the capturing stream wait for it (e.g. "
          "torch.openreg.current_stream().wait_stream(side_stream)) before "
          "ending the capture"));
    }
  }
  return absl::OkStatus();
}

absl::Status CapturedGraph::Finish() {
  std::vector<Item> items;
  {
    absl::MutexLock lock(&mutex_);
    if (absl::Status status = CheckRecording(); !status.ok()) return status;
    if (absl::Status status = CheckJoined(); !status.ok()) {
      abandoned_ = std::string(status.message());
      items_.clear();
      return status;
    }
    finished_ = true;
    items.swap(items_);
  }
  // Consecutive nodes of a stream, up to its next record or wait, form one
  // segment; segments, records and waits are issued in capture order, so
  // each wait follows its record.
  std::vector<std::shared_ptr<CapturedSegment>> open(streams_.size());
  auto flush = [&](int stream) {
    if (open[stream] == nullptr) return;
    steps_.push_back(Launch{stream, std::move(open[stream])});
    open[stream] = nullptr;
  };
  for (Item& item : items) {
    switch (item.kind) {
      case Item::kNode:
        if (open[item.stream] == nullptr) {
          open[item.stream] = std::make_shared<CapturedSegment>();
        }
        open[item.stream]->nodes.push_back(std::move(item.node));
        break;
      case Item::kRecord:
        flush(item.stream);
        steps_.push_back(RecordEvent{item.stream, item.event});
        break;
      case Item::kWait:
        flush(item.stream);
        steps_.push_back(WaitEvent{item.stream, item.event});
        break;
    }
  }
  for (size_t stream = 0; stream < open.size(); ++stream) flush(stream);
  // The first step must be a launch on the origin stream: it applies the
  // replay's random seeds before any recorded work runs.
  if (steps_.empty() || !std::holds_alternative<Launch>(steps_.front()) ||
      std::get<Launch>(steps_.front()).stream != 0) {
    steps_.insert(steps_.begin(),
                  Launch{0, std::make_shared<CapturedSegment>()});
  }
  return absl::OkStatus();
}

std::function<void()> CapturedGraph::DrawRandomness() const {
  if (randomness_.empty()) return nullptr;
  std::vector<uint64_t> seeds;
  seeds.reserve(randomness_.size());
  for (const CapturedRandomness& randomness : randomness_) {
    seeds.push_back(randomness.draw());
  }
  return [this, seeds = std::move(seeds)] {
    for (size_t i = 0; i < seeds.size(); ++i) randomness_[i].reseed(seeds[i]);
  };
}

void CapturedGraph::IssueForReplay() const {
  for (const std::function<void()>& issue : replay_issues_) issue();
}

void RunSegment(CapturedSegment& segment,
                absl::FunctionRef<void(CapturedWork&)> run_work) {
  for (auto& node : segment.nodes) {
    std::visit(Overloaded{[&](CapturedWork& work) { run_work(work); },
                          [](const CapturedCopy& copy) {
                            std::memcpy(copy.dst, copy.src, copy.bytes);
                          }},
               node);
  }
}

int CapturedGraph::launch_count() const {
  int launches = 0;
  for (const Step& step : steps_) {
    launches += std::holds_alternative<Launch>(step) ? 1 : 0;
  }
  return launches;
}

int CapturedGraph::node_count() const {
  int nodes = 0;
  for (const Step& step : steps_) {
    if (const Launch* launch = std::get_if<Launch>(&step)) {
      nodes += static_cast<int>(launch->segment->nodes.size());
    }
  }
  return nodes;
}

std::string CapturedGraph::DebugString() const {
  std::string out =
      absl::StrCat("openreg graph on openreg:", device_, ": ", streams_.size(),
                   " stream(s), ", event_count_, " event(s), ", launch_count(),
                   " launch(es) per replay, ", node_count(), " node(s), ",
                   randomness_.size(), " random kernel(s), ",
                   replay_issues_.size(),
                   " host step(s) issued per replay, private pool (",
                   pool_.first, ", ", pool_.second, ")\n");
  for (const Step& step : steps_) {
    std::visit(
        Overloaded{[&](const Launch& launch) {
                     absl::StrAppend(&out, "launch on stream ", launch.stream,
                                     " (", launch.segment->nodes.size(),
                                     " nodes)\n");
                     for (const auto& node : launch.segment->nodes) {
                       std::visit(Overloaded{[&](const CapturedWork& work) {
                                               absl::StrAppend(&out, "  work ",
                                                               work.name, "\n");
                                             },
                                             [&](const CapturedCopy& copy) {
                                               absl::StrAppend(
                                                   &out, "  copy ",
                                                   CopyKindName(copy.kind), " ",
                                                   copy.bytes, " bytes\n");
                                             }},
                                  node);
                     }
                   },
                   [&](const RecordEvent& record) {
                     absl::StrAppend(&out, "record event ", record.event,
                                     " on stream ", record.stream, "\n");
                   },
                   [&](const WaitEvent& wait) {
                     absl::StrAppend(&out, "stream ", wait.stream,
                                     " waits for event ", wait.event, "\n");
                   }},
        step);
  }
  return out;
}

}  // namespace openreg
