// The set of live handles of one kind (streams or events) and the object
// behind each.
//
// A handle is not a pointer to the object: it is a process-wide counter value
// that is never reused, even across shutdown and init. A destroyed or foreign
// handle therefore never aliases a live one, and looking it up is a failed
// hash-map lookup rather than a use-after-free. Objects are shared: a lookup
// returns its own reference, so an object stays alive while a call or a
// queued work item still uses it after its handle was destroyed.
//
// Ownership: the registry holds one reference per live handle.
// Thread-safety: all members may be called concurrently; mu_ guards objects_.
#ifndef OPENREG_PLUGINS_THREADED_SIM_HANDLE_REGISTRY_H_
#define OPENREG_PLUGINS_THREADED_SIM_HANDLE_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace openreg::threaded_sim {

// A fresh non-zero handle value, unique within the process.
uintptr_t NextHandleId();

template <typename Handle>
Handle NewHandle() {
  return reinterpret_cast<Handle>(NextHandleId());
}

template <typename Handle, typename Object>
class HandleRegistry {
 public:
  // Makes `handle` (from NewHandle) live, referring to `object`.
  void Insert(Handle handle, std::shared_ptr<Object> object) {
    absl::MutexLock lock(&mu_);
    objects_.emplace(Key(handle), std::move(object));
  }

  // Makes `handle` dead and returns its object, or null when it was not live.
  std::shared_ptr<Object> Remove(Handle handle) {
    absl::MutexLock lock(&mu_);
    auto it = objects_.find(Key(handle));
    if (it == objects_.end()) return nullptr;
    std::shared_ptr<Object> object = std::move(it->second);
    objects_.erase(it);
    return object;
  }

  // The object of a live `handle`, or null.
  std::shared_ptr<Object> Find(Handle handle) const {
    absl::MutexLock lock(&mu_);
    auto it = objects_.find(Key(handle));
    if (it == objects_.end()) return nullptr;
    return it->second;
  }

 private:
  static uintptr_t Key(Handle handle) {
    return reinterpret_cast<uintptr_t>(handle);
  }

  mutable absl::Mutex mu_;
  absl::flat_hash_map<uintptr_t, std::shared_ptr<Object>> objects_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_HANDLE_REGISTRY_H_
