#include "plugins/threaded_sim/device.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "plugins/threaded_sim/adversarial_delay.h"
#include "plugins/sim_support/error.h"

namespace openreg::threaded_sim {

using sim::Fail;

Device::Device(int32_t index, const DriverOptions& options,
               sim::ActivityRecorder* activity)
    : index_(index),
      options_(options),
      activity_(activity),
      slots_(options.execution_slots) {}

std::shared_ptr<Stream> Device::CreateStream(openreg_stream handle,
                                             int32_t priority) {
  ReapRetiredStreams();
  absl::MutexLock lock(&mu_);
  auto stream = std::make_shared<Stream>(
      handle, index_, priority, &slots_, activity_,
      AdversarialDelay(options_, index_, streams_created_++),
      options_.idle_release_ms > 0
          ? absl::Milliseconds(options_.idle_release_ms)
          : absl::InfiniteDuration(),
      static_cast<uint64_t>(options_.queue_depth));
  streams_.push_back(stream);
  return stream;
}

void Device::DestroyStream(Stream& stream) {
  stream.RequestDestroy();
  ReapRetiredStreams();
}

void Device::ReapRetiredStreams() {
  std::vector<std::shared_ptr<Stream>> retired;
  {
    absl::MutexLock lock(&mu_);
    auto first_retired = std::stable_partition(
        streams_.begin(), streams_.end(),
        [](const std::shared_ptr<Stream>& stream) {
          return !stream->Retired();
        });
    for (auto it = first_retired; it != streams_.end(); ++it) {
      if (std::optional<AsyncFailure> failure = (*it)->TakeFailure()) {
        retired_failures_.push_back(*failure);
      }
      retired.push_back(std::move(*it));
    }
    streams_.erase(first_retired, streams_.end());
  }
  // Retired workers have left their loop, so this does not wait for work.
  for (const std::shared_ptr<Stream>& stream : retired) {
    stream->Join(absl::InfiniteFuture());
  }
}

openreg_status Device::Synchronize(const char* function) {
  if (const Stream* current = Stream::CurrentWorker();
      current != nullptr && current->device() == index_) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: called by a host function running on "
                                "stream %p of device %d, which would wait for "
                                "itself forever; host functions must not "
                                "synchronize their own device",
                                function, current->handle(), index_));
  }
  std::vector<std::shared_ptr<Stream>> streams;
  {
    absl::MutexLock lock(&mu_);
    streams = streams_;
  }
  // Fix every stream's target first: work enqueued while this call waits is
  // not part of it.
  std::vector<uint64_t> targets;
  targets.reserve(streams.size());
  for (const std::shared_ptr<Stream>& stream : streams) {
    targets.push_back(stream->enqueued());
  }
  for (size_t i = 0; i < streams.size(); ++i) {
    if (!streams[i]->AwaitFinished(targets[i])) {
      return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                  absl::StrFormat("%s: device %d was stopped (the process is "
                                  "exiting, or its context was destroyed) "
                                  "before its work finished",
                                  function, index_));
    }
  }
  std::vector<std::string> failures;
  {
    absl::MutexLock lock(&mu_);
    for (const AsyncFailure& failure : retired_failures_) {
      failures.push_back(failure.Describe() + " (stream since destroyed)");
    }
    retired_failures_.clear();
  }
  for (const std::shared_ptr<Stream>& stream : streams) {
    if (std::optional<AsyncFailure> failure = stream->TakeFailure()) {
      failures.push_back(failure->Describe());
    }
  }
  if (failures.empty()) return OPENREG_SUCCESS;
  return Fail(OPENREG_ERROR_LAUNCH_FAILURE,
              absl::StrFormat("%s: asynchronous work on device %d failed: %s; "
                              "each failure is reported once and the streams "
                              "keep running",
                              function, index_, absl::StrJoin(failures, "; ")));
}

std::vector<std::shared_ptr<Event>> Device::Stop() {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    absl::MutexLock lock(&mu_);
    streams = streams_;
  }
  std::vector<std::shared_ptr<Event>> orphaned_events;
  for (const std::shared_ptr<Stream>& stream : streams) {
    for (std::shared_ptr<Event>& event : stream->Stop()) {
      orphaned_events.push_back(std::move(event));
    }
  }
  // Only now that no stream takes another item: workers waiting for a slot
  // wake up and exit instead of running what they waited with.
  slots_.Cancel();
  return orphaned_events;
}

bool Device::Join(absl::Time deadline) {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    absl::MutexLock lock(&mu_);
    streams = streams_;
  }
  bool all_joined = true;
  for (const std::shared_ptr<Stream>& stream : streams) {
    all_joined = stream->Join(deadline) && all_joined;
  }
  return all_joined;
}

}  // namespace openreg::threaded_sim
