// Everything an initialized threaded_sim driver owns.
//
// Ownership: DriverState owns the devices (memory, slots, streams), pinned
// host memory and the handle registries. The process-wide slot in
// global_state.h holds it between init and shutdown; every API call takes its
// own reference for the duration of the call.
// Thread-safety: members are set at construction and never reassigned; each
// component has its own mutex. Stop() is for shutdown and process exit only.
#ifndef OPENREG_PLUGINS_THREADED_SIM_DRIVER_STATE_H_
#define OPENREG_PLUGINS_THREADED_SIM_DRIVER_STATE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "core/driver/openreg_driver.h"
#include "plugins/sim_support/allocation_table.h"
#include "plugins/sim_support/pinned_host_memory.h"
#include "plugins/sim_support/pointer_attributes.h"
#include "plugins/threaded_sim/config.h"
#include "plugins/threaded_sim/device.h"
#include "plugins/threaded_sim/event.h"
#include "plugins/threaded_sim/handle_registry.h"
#include "plugins/threaded_sim/stream.h"

namespace openreg::threaded_sim {

// How long shutdown (and process exit) waits for a worker to finish the item
// it is running before leaving it running and keeping the state alive.
inline constexpr absl::Duration kWorkerJoinTimeout = absl::Seconds(5);

using sim::PointerInfo;

class DriverState {
 public:
  explicit DriverState(const DriverConfig& config);

  DriverState(const DriverState&) = delete;
  DriverState& operator=(const DriverState&) = delete;

  int32_t device_count() const {
    return static_cast<int32_t>(devices_.size());
  }
  uint64_t device_memory_bytes() const { return device_memory_bytes_; }

  // INVALID_DEVICE, with the valid range in the message, unless `device`
  // exists. `function` names the API call being served.
  openreg_status CheckDevice(int32_t device, const char* function) const;

  // Callers pass a device index that CheckDevice accepted.
  Device& device(int32_t index) { return *devices_[index]; }
  sim::PinnedHostMemory& pinned_memory() { return pinned_memory_; }
  HandleRegistry<openreg_stream, Stream>& streams() { return streams_; }
  HandleRegistry<openreg_event, Event>& events() { return events_; }

  // The object of a live handle, else INVALID_ARGUMENT naming `function`
  // (the Not* functions below).
  openreg_status FindStream(openreg_stream handle, const char* function,
                            std::shared_ptr<Stream>* stream) const;
  openreg_status FindEvent(openreg_event handle, const char* function,
                           std::shared_ptr<Event>* event) const;

  // The INVALID_ARGUMENT for a NULL or dead `handle`, naming `function`.
  static openreg_status NotLiveStream(openreg_stream handle,
                                      const char* function);
  static openreg_status NotLiveEvent(openreg_event handle,
                                     const char* function);

  // Where `ptr` points: into a device allocation, a pinned host allocation,
  // or neither.
  PointerInfo Classify(const void* ptr) const;

  // Shutdown and process exit: drops all queued work and joins the workers,
  // waiting at most `timeout` for running items. Returns false when some
  // worker is still running an item; the state must then never be destroyed,
  // since that item may still use device memory.
  bool Stop(absl::Duration timeout);

 private:
  const uint64_t device_memory_bytes_;
  std::vector<std::unique_ptr<Device>> devices_;
  sim::PinnedHostMemory pinned_memory_;
  HandleRegistry<openreg_stream, Stream> streams_;
  HandleRegistry<openreg_event, Event> events_;
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_DRIVER_STATE_H_
