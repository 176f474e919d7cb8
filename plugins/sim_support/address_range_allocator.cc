#include "plugins/sim_support/address_range_allocator.h"

#include <algorithm>
#include <iterator>

namespace openreg::sim {

AddressRangeAllocator::AddressRangeAllocator(uint64_t size, uint64_t granule)
    : granule_(granule), free_bytes_(size) {
  if (size > 0) holes_.emplace(0, size);
}

std::optional<uint64_t> AddressRangeAllocator::Allocate(uint64_t bytes) {
  const uint64_t length = RoundUp(bytes);
  // RoundUp wraps to 0 for sizes within a granule of 2^64.
  if (length == 0 || length < bytes) return std::nullopt;
  for (auto it = holes_.begin(); it != holes_.end(); ++it) {
    const auto [start, hole] = *it;
    if (hole < length) continue;
    holes_.erase(it);
    if (hole > length) holes_.emplace(start + length, hole - length);
    free_bytes_ -= length;
    return start;
  }
  return std::nullopt;
}

void AddressRangeAllocator::Release(uint64_t offset, uint64_t bytes) {
  uint64_t start = offset;
  uint64_t length = RoundUp(bytes);
  free_bytes_ += length;
  auto next = holes_.lower_bound(start);
  if (next != holes_.end() && next->first == start + length) {
    length += next->second;
    next = holes_.erase(next);
  }
  if (next != holes_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == start) {
      start = previous->first;
      length += previous->second;
      holes_.erase(previous);
    }
  }
  holes_.emplace(start, length);
}

uint64_t AddressRangeAllocator::largest_hole() const {
  uint64_t largest = 0;
  for (const auto& [start, length] : holes_)
    largest = std::max(largest, length);
  return largest;
}

}  // namespace openreg::sim
