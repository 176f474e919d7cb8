// One simulated device: its execution slots and every stream created on it
// (its memory is in sim::SimState).
//
// The device keeps each stream until it is destroyed and drained, so that
// device_synchronize also waits for work on streams destroyed while their
// work was still queued (stream_destroy does not block). A failure on such a
// stream that nobody reported is kept for the device's next
// device_synchronize.
//
// Ownership: owned by DriverState; owns its slots and a reference to each of
// its streams.
// Thread-safety: all members may be called concurrently. mu_ guards the
// stream list, the creation count and the failures of retired streams; it is
// never held while waiting for work. Lock order: device, then stream.
// Synchronize() and Join() block.
#ifndef OPENREG_PLUGINS_THREADED_SIM_DEVICE_H_
#define OPENREG_PLUGINS_THREADED_SIM_DEVICE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/activity_recorder.h"
#include "plugins/threaded_sim/event.h"
#include "plugins/threaded_sim/execution_slots.h"
#include "plugins/threaded_sim/options.h"
#include "plugins/threaded_sim/stream.h"

namespace openreg::threaded_sim {

class Device {
 public:
  // `activity` is the context's recorder (ABI 2.2); it outlives the device.
  Device(int32_t index, const DriverOptions& options,
         sim::ActivityRecorder* activity);

  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int32_t index() const { return index_; }
  int32_t execution_slots() const { return slots_.count(); }

  // stream_create: a new stream on this device, for an already validated
  // priority. The caller registers its handle.
  std::shared_ptr<Stream> CreateStream(openreg_stream handle,
                                       int32_t priority);
  // stream_destroy of a stream of this device whose handle was removed.
  void DestroyStream(Stream& stream);

  // device_synchronize: waits for everything enqueued on the device's
  // streams before the call, then reports their unreported failures once.
  openreg_status Synchronize(const char* function);

  // Shutdown: drops every stream's queued work; returns the events whose
  // markers were dropped (see Stream::Stop).
  std::vector<std::shared_ptr<Event>> Stop();
  // Joins every worker until `deadline`; false if some worker is still
  // running an item.
  bool Join(absl::Time deadline);

 private:
  // Joins and forgets streams that were destroyed and have drained, keeping
  // their unreported failures.
  void ReapRetiredStreams() ABSL_LOCKS_EXCLUDED(mu_);

  const int32_t index_;
  const DriverOptions options_;
  sim::ActivityRecorder* const activity_;
  ExecutionSlots slots_;
  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<Stream>> streams_ ABSL_GUARDED_BY(mu_);
  uint64_t streams_created_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<AsyncFailure> retired_failures_ ABSL_GUARDED_BY(mu_);
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_DEVICE_H_
