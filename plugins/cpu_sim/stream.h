// Stream bookkeeping. cpu_sim runs all work synchronously on the calling
// thread, so a stream has no queue: it only remembers its device and priority,
// and its handle must be live for work to be accepted on it.
//
// Ownership: StreamTable owns the record of every live stream.
// Thread-safety: all members may be called concurrently; the registry's mutex
// guards the records.
#ifndef OPENREG_PLUGINS_CPU_SIM_STREAM_H_
#define OPENREG_PLUGINS_CPU_SIM_STREAM_H_

#include <cstdint>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/handle_registry.h"

namespace openreg::cpu_sim {

struct StreamInfo {
  int32_t device;
  int32_t priority;
  // Held while one of the stream's items (host function, copy, memset) runs,
  // so items launched on one stream from several threads still run one at a
  // time, in the order their launches took it: stream order.
  std::shared_ptr<absl::Mutex> execution;
};

class StreamTable {
 public:
  // stream_create on an already validated `device` and `priority`.
  openreg_status Create(int32_t device, int32_t priority,
                        openreg_stream* stream);

  // stream_destroy: INVALID_ARGUMENT when `stream` is not live.
  openreg_status Destroy(openreg_stream stream);

  // Fills `info` for a live `stream`, else fails with INVALID_ARGUMENT and a
  // message naming `function`, the API call being served.
  openreg_status Lookup(openreg_stream stream, const char* function,
                        StreamInfo* info) const;

  // Lookup() for callers that only need the handle to be live.
  openreg_status CheckLive(openreg_stream stream, const char* function) const;

 private:
  sim::HandleRegistry<openreg_stream, StreamInfo> registry_;
};

}  // namespace openreg::cpu_sim

#endif  // OPENREG_PLUGINS_CPU_SIM_STREAM_H_
