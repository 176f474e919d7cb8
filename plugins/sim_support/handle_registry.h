// The set of live handles of one kind (streams or events) and the value the
// driver keeps for each: cpu_sim a plain record, threaded_sim a shared
// pointer to the stream or event object.
//
// A handle is not a pointer to the value: it is a counter value of the library
// that is never reused, across contexts too. Each context has its own
// registries, so a destroyed handle, or one of another context, never aliases
// a live one, and looking it up is a failed hash-map lookup rather than a
// use-after-free.
//
// Ownership: the registry owns the values; handles are plain numbers.
// Thread-safety: all members may be called concurrently; mu_ guards values_.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_HANDLE_REGISTRY_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_HANDLE_REGISTRY_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "driver_abi/openreg_driver.h"

namespace openreg::sim {

// A fresh non-zero handle value, unique within the driver library (streams
// and events of every context share the sequence).
uintptr_t NextHandleId();

template <typename Handle>
Handle NewHandle() {
  return reinterpret_cast<Handle>(NextHandleId());
}

// The INVALID_ARGUMENT for a NULL or dead handle passed to `function`.
openreg_status NotLiveStream(openreg_stream stream, const char* function);
openreg_status NotLiveEvent(openreg_event event, const char* function);

template <typename Handle, typename Value>
class HandleRegistry {
 public:
  // Makes `handle` (from NewHandle) live with `value`: for values that need
  // to know their handle.
  void Insert(Handle handle, Value value) {
    absl::MutexLock lock(&mu_);
    values_.emplace(Key(handle), std::move(value));
  }

  // A new live handle with `value`.
  Handle Add(Value value) {
    const Handle handle = NewHandle<Handle>();
    Insert(handle, std::move(value));
    return handle;
  }

  // Makes `handle` dead and returns its value, or nullopt when it was not
  // live.
  std::optional<Value> Remove(Handle handle) {
    absl::MutexLock lock(&mu_);
    auto it = values_.find(Key(handle));
    if (it == values_.end()) return std::nullopt;
    std::optional<Value> value = std::move(it->second);
    values_.erase(it);
    return value;
  }

  // A copy of the value of a live `handle`, or nullopt.
  std::optional<Value> Find(Handle handle) const {
    absl::MutexLock lock(&mu_);
    auto it = values_.find(Key(handle));
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }

  // Calls `update(Value&)` under the lock and returns what it returns, or
  // `not_live` when `handle` is not live. `update` must not call back into
  // this registry.
  template <typename Result, typename Update>
  Result Modify(Handle handle, Result not_live, Update&& update) {
    absl::MutexLock lock(&mu_);
    auto it = values_.find(Key(handle));
    if (it == values_.end()) return not_live;
    return std::forward<Update>(update)(it->second);
  }

 private:
  static uintptr_t Key(Handle handle) {
    return reinterpret_cast<uintptr_t>(handle);
  }

  mutable absl::Mutex mu_;
  absl::flat_hash_map<uintptr_t, Value> values_ ABSL_GUARDED_BY(mu_);
};

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_HANDLE_REGISTRY_H_
