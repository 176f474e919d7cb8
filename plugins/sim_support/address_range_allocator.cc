#include "plugins/sim_support/address_range_allocator.h"

#include <algorithm>

namespace openreg::sim {

AddressRangeAllocator::AddressRangeAllocator(uint64_t size, uint64_t granule)
    : granule_(granule) {
  if (size > 0) holes_.Insert(0, size);
}

std::optional<uint64_t> AddressRangeAllocator::Allocate(uint64_t bytes) {
  const uint64_t length = RoundUp(bytes);
  // RoundUp wraps to 0 for sizes within a granule of 2^64.
  if (length == 0 || length < bytes) return std::nullopt;
  for (const auto& [start, hole] : holes_.ranges()) {
    if (hole < length) continue;
    const uint64_t offset = start;
    holes_.Erase(offset, length);
    return offset;
  }
  return std::nullopt;
}

void AddressRangeAllocator::Release(uint64_t offset, uint64_t bytes) {
  holes_.Insert(offset, RoundUp(bytes));
}

uint64_t AddressRangeAllocator::largest_hole() const {
  uint64_t largest = 0;
  for (const auto& [start, length] : holes_.ranges())
    largest = std::max(largest, length);
  return largest;
}

}  // namespace openreg::sim
