// A set of disjoint ranges [start, start + length) of offsets, each kept
// coalesced with its neighbours, so the set holds one entry per maximal run.
// Two users in the simulated device memory: the holes of the address-range
// allocator (address_range_allocator.h) and the free ranges whose execution
// pages stay committed (device_memory.h, Note [Retained execution pages]).
//
// Thread-safety: none; the owner guards it.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_RANGE_SET_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_RANGE_SET_H_

#include <cstdint>

#include "absl/container/btree_map.h"

namespace openreg::sim {

class RangeSet {
 public:
  // Start -> length, ascending; neighbours never touch.
  using Ranges = absl::btree_map<uint64_t, uint64_t>;

  // Adds [start, start + length) (length > 0), which must not overlap the
  // set, joining it with the ranges right before and after.
  void Insert(uint64_t start, uint64_t length);

  // Removes whatever part of [start, start + length) the set holds, splitting
  // ranges that stick out on either side; returns the bytes removed.
  uint64_t Erase(uint64_t start, uint64_t length);

  // Whether the set holds every offset of [start, start + length).
  bool Contains(uint64_t start, uint64_t length) const;

  const Ranges& ranges() const { return ranges_; }
  // The summed length of all ranges.
  uint64_t bytes() const { return bytes_; }

 private:
  Ranges ranges_;
  uint64_t bytes_ = 0;
};

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_RANGE_SET_H_
