// How the device caching allocator rounds requests and sizes the segments it
// asks the driver for (docs/memory.md, "Sizes and pools").
//
// Requests are rounded up to kMinBlockSize. Requests up to kSmallRequestLimit
// come from the small pool, carved out of kSmallSegmentSize segments, so many
// small tensors share one driver allocation. Larger requests come from the
// large pool: those under kLargeSegmentThreshold share kLargeSegmentSize
// segments; bigger ones get a segment of their own, rounded to
// kLargeSegmentRounding, so a freed large segment fits similar requests.
#ifndef OPENREG_CORE_RUNTIME_MEMORY_SIZE_CLASSES_H_
#define OPENREG_CORE_RUNTIME_MEMORY_SIZE_CLASSES_H_

#include <cstddef>

namespace openreg {

inline constexpr size_t kMinBlockSize = 512;
inline constexpr size_t kSmallRequestLimit = size_t{1} << 20;      // 1 MiB
inline constexpr size_t kSmallSegmentSize = size_t{2} << 20;       // 2 MiB
inline constexpr size_t kLargeSegmentThreshold = size_t{10} << 20; // 10 MiB
inline constexpr size_t kLargeSegmentSize = size_t{20} << 20;      // 20 MiB
inline constexpr size_t kLargeSegmentRounding = size_t{2} << 20;   // 2 MiB

inline constexpr size_t RoundUp(size_t size, size_t multiple) {
  return (size + multiple - 1) / multiple * multiple;
}

// The size a request of `requested` bytes occupies; 0 bytes take one block,
// so every allocation has a distinct address.
inline constexpr size_t RoundedBlockSize(size_t requested) {
  return requested == 0 ? kMinBlockSize : RoundUp(requested, kMinBlockSize);
}

inline constexpr bool IsSmallBlockSize(size_t block_size) {
  return block_size <= kSmallRequestLimit;
}

// The driver allocation made when no cached block fits `block_size`.
inline constexpr size_t SegmentSizeFor(size_t block_size) {
  if (IsSmallBlockSize(block_size)) return kSmallSegmentSize;
  if (block_size < kLargeSegmentThreshold) return kLargeSegmentSize;
  return RoundUp(block_size, kLargeSegmentRounding);
}

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_SIZE_CLASSES_H_
