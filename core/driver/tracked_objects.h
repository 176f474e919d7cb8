// TrackedObjects: the live objects of one kind (streams, events, allocations)
// that the validation layer knows a driver handed out, plus a bounded memory
// of the ones destroyed since, so a use after destroy can be named as such.
//
// Keys are only compared, never dereferenced. Live objects are ordered, so
// allocations can be found by an address inside them (LastAtOrBelow). The
// graveyard keeps at most `graveyard_capacity` destroyed objects, oldest
// forgotten first: a program that destroys millions of events must not grow
// without bound, and an object forgotten that long ago is reported as unknown
// instead. A driver may reuse an address for a new object; adding it again
// takes it out of the graveyard.
//
// Thread-safety: none; the owner (ValidationTracker) holds a mutex.
#ifndef OPENREG_CORE_DRIVER_TRACKED_OBJECTS_H_
#define OPENREG_CORE_DRIVER_TRACKED_OBJECTS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "absl/container/btree_map.h"

namespace openreg {

template <typename Key, typename Info>
class TrackedObjects {
 public:
  struct Entry {
    Key key;
    const Info* info;
  };

  explicit TrackedObjects(size_t graveyard_capacity)
      : graveyard_capacity_(graveyard_capacity) {}

  void Add(Key key, Info info) {
    graveyard_.erase(key);
    live_.insert_or_assign(key, std::move(info));
  }

  const Info* FindLive(Key key) const {
    auto it = live_.find(key);
    return it == live_.end() ? nullptr : &it->second;
  }
  const Info* FindDestroyed(Key key) const {
    auto it = graveyard_.find(key);
    return it == graveyard_.end() ? nullptr : &it->second.info;
  }

  // The live (destroyed) object with the greatest key not above `key`: for
  // allocations keyed by base address, the one that may contain `key`.
  std::optional<Entry> LiveAtOrBelow(Key key) const {
    auto it = live_.upper_bound(key);
    if (it == live_.begin()) return std::nullopt;
    --it;
    return Entry{it->first, &it->second};
  }
  std::optional<Entry> DestroyedAtOrBelow(Key key) const {
    auto it = graveyard_.upper_bound(key);
    if (it == graveyard_.begin()) return std::nullopt;
    --it;
    return Entry{it->first, &it->second.info};
  }

  // Moves a live object to the graveyard and returns its info; nullopt when
  // `key` is not live.
  std::optional<Info> Destroy(Key key) {
    auto it = live_.find(key);
    if (it == live_.end()) return std::nullopt;
    Info info = std::move(it->second);
    live_.erase(it);
    Bury(key, info);
    return info;
  }

  // Every live object becomes destroyed (the driver was shut down).
  void DestroyAll() {
    for (const auto& [key, info] : live_) Bury(key, info);
    live_.clear();
  }

  size_t live_count() const { return live_.size(); }

 private:
  struct Buried {
    Info info;
    uint64_t burial;  // which entry of burial_order_ buried it
  };

  void Bury(Key key, const Info& info) {
    const uint64_t burial = next_burial_++;
    graveyard_.insert_or_assign(key, Buried{info, burial});
    burial_order_.emplace_back(key, burial);
    // burial_order_ may also hold burials undone since (the key was revived
    // or buried again): only the matching burial forgets its key. Bounding
    // the order bounds the graveyard, which never holds more keys.
    while (burial_order_.size() > graveyard_capacity_) {
      const auto& [oldest_key, oldest_burial] = burial_order_.front();
      auto it = graveyard_.find(oldest_key);
      if (it != graveyard_.end() && it->second.burial == oldest_burial) {
        graveyard_.erase(it);
      }
      burial_order_.pop_front();
    }
  }

  size_t graveyard_capacity_;
  uint64_t next_burial_ = 0;
  absl::btree_map<Key, Info> live_;
  absl::btree_map<Key, Buried> graveyard_;
  std::deque<std::pair<Key, uint64_t>> burial_order_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_DRIVER_TRACKED_OBJECTS_H_
