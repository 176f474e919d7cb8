// Events recorded on streams, each standing for a key (a block that must
// not be reused until its event has fired, or the point of a stream that its
// firing shows passed). Both caching allocators keep one;
// the caller's mutex guards it. It owns the events it holds until it hands
// them back through Sweep.
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
  void Add(DriverEvent event, Key key) {
    pending_.push_back({std::move(event), key});
  }
  bool empty() const { return pending_.empty(); }
  // Whether `pred` holds for the key of a pending event.
  template <typename Predicate>
  bool AnyKey(Predicate pred) const {
    for (const Entry& entry : pending_) {
      if (pred(entry.key)) return true;
    }
    return false;
  }

  // Calls on_fired(DriverEvent, key) for every event that has fired, or,
  // with `wait`, for every event after waiting for it, and forgets them; the
  // event is handed over, the callee's to reuse or let go. A failed wait
  // means the stream failed: it is past the event either way.
  template <typename OnFired>
  void Sweep(const Driver& driver, bool wait, OnFired on_fired) {
    size_t kept = 0;
    for (Entry& entry : pending_) {
      const bool fired =
          wait ? (driver.EventSynchronize(entry.event.get()).IgnoreError(),
                  true)
               : driver.EventQuery(entry.event.get()).value_or(false);
      if (fired) {
        on_fired(std::move(entry.event), entry.key);
      } else {
        pending_[kept++] = std::move(entry);
      }
    }
    pending_.resize(kept);
  }

 private:
  struct Entry {
    DriverEvent event;
    Key key;
  };
  std::vector<Entry> pending_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_PENDING_EVENTS_H_
