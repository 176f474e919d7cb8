// The set of live handles of one kind (streams or events) and the driver's
// record behind each.
//
// A handle is not a pointer to the record: it is a process-wide counter value
// that is never reused, even across shutdown and init. A destroyed or foreign
// handle therefore never aliases a live one, and looking it up is a failed
// hash-map lookup rather than a use-after-free.
//
// Ownership: the registry owns the records; handles are plain values.
// Thread-safety: all members may be called concurrently; mu_ guards records_.
#ifndef OPENREG_PLUGINS_CPU_SIM_HANDLE_REGISTRY_H_
#define OPENREG_PLUGINS_CPU_SIM_HANDLE_REGISTRY_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace openreg::cpu_sim {

// A fresh non-zero handle value, unique within the process.
uintptr_t NextHandleId();

template <typename Handle, typename Record>
class HandleRegistry {
 public:
  Handle Add(Record record) {
    const uintptr_t id = NextHandleId();
    absl::MutexLock lock(&mu_);
    records_.emplace(id, std::move(record));
    return reinterpret_cast<Handle>(id);
  }

  // Returns false when `handle` is not live.
  bool Remove(Handle handle) {
    absl::MutexLock lock(&mu_);
    return records_.erase(Key(handle)) == 1;
  }

  // A copy of the record, or nullopt when `handle` is not live.
  std::optional<Record> Find(Handle handle) const {
    absl::MutexLock lock(&mu_);
    auto it = records_.find(Key(handle));
    if (it == records_.end()) return std::nullopt;
    return it->second;
  }

  // Calls `update(Record&)` under the lock and returns what it returns, or
  // `not_live` when `handle` is not live. `update` must not call back into
  // this registry.
  template <typename Result, typename Update>
  Result Modify(Handle handle, Result not_live, Update&& update) {
    absl::MutexLock lock(&mu_);
    auto it = records_.find(Key(handle));
    if (it == records_.end()) return not_live;
    return std::forward<Update>(update)(it->second);
  }

 private:
  static uintptr_t Key(Handle handle) {
    return reinterpret_cast<uintptr_t>(handle);
  }

  mutable absl::Mutex mu_;
  absl::flat_hash_map<uintptr_t, Record> records_ ABSL_GUARDED_BY(mu_);
};

}  // namespace openreg::cpu_sim

#endif  // OPENREG_PLUGINS_CPU_SIM_HANDLE_REGISTRY_H_
