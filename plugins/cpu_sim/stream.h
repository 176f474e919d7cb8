// Stream bookkeeping. cpu_sim runs all work synchronously on the calling
// thread, so a stream has no queue: it only remembers its device and priority,
// and its handle must be live for work to be accepted on it.
//
// Note [Remembered stream lookups]
// Every launch, copy and memset looks its stream up, and a registry lookup
// takes the registry's mutex: two atomic instructions, plus two more when the
// record held a reference-counted execution mutex. A 4x4 matmul's whole launch
// is a few hundred instructions (docs/performance.md), so each thread instead
// remembers its last successful lookup together with the table's generation:
// a value drawn from a process-wide counter whenever a stream of the table is
// created or destroyed, so no two tables, and no two states of one table, ever
// share one. A lookup whose handle and generation match the remembered ones
// returns the remembered record after one plain atomic load; anything else
// takes the registry's mutex. A destroyed handle is therefore rejected as soon
// as its destruction is visible to the looking thread, exactly as before.
//
// The records hold plain pointers to their execution mutexes, which the table
// owns and never frees while it lives: a launch racing the destruction of its
// stream still locks a valid mutex (an idle one is handed to a later stream,
// where at worst the two serialize).
//
// Ownership: StreamTable owns the record of every live stream and every
// execution mutex it has made.
// Thread-safety: all members may be called concurrently; the registry's mutex
// guards the records, mutexes_mu_ the execution mutexes.
#ifndef OPENREG_PLUGINS_CPU_SIM_STREAM_H_
#define OPENREG_PLUGINS_CPU_SIM_STREAM_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "driver_abi/openreg_driver.h"
#include "plugins/sim_support/handle_registry.h"

namespace openreg::cpu_sim {

struct StreamInfo {
  int32_t device;
  int32_t priority;
  // Held while one of the stream's items (host function, copy, memset) runs,
  // so items launched on one stream from several threads still run one at a
  // time, in the order their launches took it: stream order. Owned by the
  // StreamTable.
  absl::Mutex* execution;
};

class StreamTable {
 public:
  StreamTable();

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
  // An execution mutex for a new stream: an idle one, else a new one.
  absl::Mutex* TakeExecutionMutex();
  // Marks the streams' set as changed (Note [Remembered stream lookups]).
  void NewGeneration();

  sim::HandleRegistry<openreg_stream, StreamInfo> registry_;
  std::atomic<uint64_t> generation_;

  absl::Mutex mutexes_mu_;
  // A deque: its elements never move, so the records' pointers stay valid.
  std::deque<absl::Mutex> execution_mutexes_ ABSL_GUARDED_BY(mutexes_mu_);
  std::vector<absl::Mutex*> idle_execution_mutexes_
      ABSL_GUARDED_BY(mutexes_mu_);
};

}  // namespace openreg::cpu_sim

#endif  // OPENREG_PLUGINS_CPU_SIM_STREAM_H_
