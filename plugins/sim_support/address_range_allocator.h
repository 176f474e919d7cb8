// A first-fit allocator of granule-aligned ranges inside [0, size): the
// bookkeeping behind a simulated device's reserved address space
// (device_memory.h). It hands out offsets only; mapping memory there is the
// caller's business.
//
// Free ranges are kept in an address-ordered RangeSet, coalesced with their
// neighbours on release, so it holds one entry per hole. First fit walks
// the holes from the lowest address: device allocations are few (the core
// caches device memory), so the walk is short.
//
// Thread-safety: none; DeviceMemory guards it with its mutex.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_ADDRESS_RANGE_ALLOCATOR_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_ADDRESS_RANGE_ALLOCATOR_H_

#include <cstdint>
#include <optional>

#include "plugins/sim_support/range_set.h"

namespace openreg::sim {

class AddressRangeAllocator {
 public:
  // Manages [0, size); `granule` (a power of two) is the unit of every range,
  // and `size` must be a multiple of it.
  AddressRangeAllocator(uint64_t size, uint64_t granule);

  // `bytes` rounded up to the granule: the length a range for it takes.
  uint64_t RoundUp(uint64_t bytes) const {
    return (bytes + granule_ - 1) & ~(granule_ - 1);
  }

  // The offset of a new range of RoundUp(bytes) (bytes > 0), the lowest one
  // that fits, or nullopt when no hole is large enough.
  std::optional<uint64_t> Allocate(uint64_t bytes);

  // Returns the range [offset, offset + RoundUp(bytes)) that Allocate handed
  // out; the caller guarantees it is live (DeviceMemory checks that first).
  void Release(uint64_t offset, uint64_t bytes);

  // Bytes in holes, the largest hole.
  uint64_t free_bytes() const { return holes_.bytes(); }
  uint64_t largest_hole() const;

 private:
  const uint64_t granule_;
  RangeSet holes_;
};

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_ADDRESS_RANGE_ALLOCATOR_H_
