// Events recorded on streams, each standing for a key (a block) that must
// not be reused until its event has fired. Both caching allocators keep one;
// the caller's mutex guards it.
#ifndef OPENREG_CORE_RUNTIME_MEMORY_PENDING_EVENTS_H_
#define OPENREG_CORE_RUNTIME_MEMORY_PENDING_EVENTS_H_

#include <cstddef>
#include <utility>
#include <vector>

#include "core/driver/driver.h"

namespace openreg {

template <typename Key>
class PendingEvents {
 public:
  void Add(openreg_event event, Key key) { pending_.push_back({event, key}); }
  bool empty() const { return pending_.empty(); }

  // Calls on_fired(event, key) for every event that has fired, or, with
  // `wait`, for every event after waiting for it, and forgets them; the
  // event is the callee's to reuse or destroy. A failed wait means the
  // stream failed: it is past the event either way.
  template <typename OnFired>
  void Sweep(const Driver& driver, bool wait, OnFired on_fired) {
    size_t kept = 0;
    for (Entry& entry : pending_) {
      const bool fired =
          wait ? (driver.EventSynchronize(entry.event).IgnoreError(), true)
               : driver.EventQuery(entry.event).value_or(false);
      if (fired) {
        on_fired(entry.event, entry.key);
      } else {
        pending_[kept++] = std::move(entry);
      }
    }
    pending_.resize(kept);
  }

 private:
  struct Entry {
    openreg_event event;
    Key key;
  };
  std::vector<Entry> pending_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_PENDING_EVENTS_H_
