#include "plugins/cpu_sim/stream.h"

#include <optional>

namespace openreg::cpu_sim {
namespace {

// Starts at 1: a thread that never looked a stream up remembers generation 0.
std::atomic<uint64_t> g_next_generation{1};

uint64_t UniqueGeneration() {
  return g_next_generation.fetch_add(1, std::memory_order_relaxed);
}

// This thread's last successful lookup (Note [Remembered stream lookups]).
struct RememberedLookup {
  uint64_t generation = 0;
  openreg_stream stream = nullptr;
  StreamInfo info{};
};

RememberedLookup& LastLookupOnThisThread() {
  thread_local RememberedLookup last;
  return last;
}

}  // namespace

StreamTable::StreamTable() : generation_(UniqueGeneration()) {}

void StreamTable::NewGeneration() {
  generation_.store(UniqueGeneration(), std::memory_order_release);
}

absl::Mutex* StreamTable::TakeExecutionMutex() {
  absl::MutexLock lock(&mutexes_mu_);
  if (!idle_execution_mutexes_.empty()) {
    absl::Mutex* idle = idle_execution_mutexes_.back();
    idle_execution_mutexes_.pop_back();
    return idle;
  }
  return &execution_mutexes_.emplace_back();
}

openreg_status StreamTable::Create(int32_t device, int32_t priority,
                                   openreg_stream* stream) {
  *stream = registry_.Add(StreamInfo{device, priority, TakeExecutionMutex()});
  NewGeneration();
  return OPENREG_SUCCESS;
}

openreg_status StreamTable::Destroy(openreg_stream stream) {
  std::optional<StreamInfo> removed = registry_.Remove(stream);
  if (!removed.has_value()) {
    return sim::NotLiveStream(stream, "stream_destroy");
  }
  // Before the mutex can serve another stream, so no thread still accepts
  // this handle through a remembered lookup once it sees the mutex reused.
  NewGeneration();
  absl::MutexLock lock(&mutexes_mu_);
  idle_execution_mutexes_.push_back(removed->execution);
  return OPENREG_SUCCESS;
}

openreg_status StreamTable::Lookup(openreg_stream stream, const char* function,
                                   StreamInfo* info) const {
  RememberedLookup& last = LastLookupOnThisThread();
  // Loaded before the registry is read, so a lookup remembered below is
  // stamped with a generation no newer than the records it saw.
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  // A remembered stream passed Find, so it is never NULL; a thread that
  // remembers nothing holds generation 0, which no table has.
  if (last.generation == generation && last.stream == stream) {
    *info = last.info;
    return OPENREG_SUCCESS;
  }
  std::optional<StreamInfo> found = registry_.Find(stream);
  if (!found.has_value()) return sim::NotLiveStream(stream, function);
  *info = *found;
  last = RememberedLookup{generation, stream, *found};
  return OPENREG_SUCCESS;
}

openreg_status StreamTable::CheckLive(openreg_stream stream,
                                  const char* function) const {
  StreamInfo info;
  return Lookup(stream, function, &info);
}

}  // namespace openreg::cpu_sim
