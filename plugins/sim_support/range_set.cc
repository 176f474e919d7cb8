#include "plugins/sim_support/range_set.h"

#include <algorithm>
#include <iterator>

namespace openreg::sim {

void RangeSet::Insert(uint64_t start, uint64_t length) {
  bytes_ += length;
  auto next = ranges_.lower_bound(start);
  if (next != ranges_.end() && next->first == start + length) {
    length += next->second;
    next = ranges_.erase(next);
  }
  if (next != ranges_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == start) {
      start = previous->first;
      length += previous->second;
      ranges_.erase(previous);
    }
  }
  ranges_.emplace(start, length);
}

uint64_t RangeSet::Erase(uint64_t start, uint64_t length) {
  const uint64_t end = start + length;
  uint64_t removed = 0;
  // One overlapping range per round, looked up afresh: inserting the parts
  // that stick out invalidates btree iterators.
  for (;;) {
    // The range starting at or before `start` if it reaches past it, else
    // the first one starting after it.
    auto it = ranges_.upper_bound(start);
    if (it != ranges_.begin()) {
      auto previous = std::prev(it);
      if (previous->first + previous->second > start) it = previous;
    }
    if (it == ranges_.end() || it->first >= end) break;
    const uint64_t range_start = it->first;
    const uint64_t range_end = range_start + it->second;
    ranges_.erase(it);
    removed += std::min(range_end, end) - std::max(range_start, start);
    // The parts outside [start, end) stay; neither touches another range.
    if (range_start < start) ranges_.emplace(range_start, start - range_start);
    if (range_end > end) ranges_.emplace(end, range_end - end);
  }
  bytes_ -= removed;
  return removed;
}

bool RangeSet::Contains(uint64_t start, uint64_t length) const {
  auto after = ranges_.upper_bound(start);
  if (after == ranges_.begin()) return false;
  const auto& [range_start, range_length] = *std::prev(after);
  return start + length <= range_start + range_length;
}

}  // namespace openreg::sim
