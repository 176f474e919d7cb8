// An owning, address-ordered set of aligned host memory blocks: the storage
// behind pinned host memory (device memory has its own reserved address
// space, device_memory.h).
//
// Ownership: the table owns every block it hands out until Erase() or its own
// destruction, which frees whatever is left (this is how shutdown releases
// memory the core never freed).
// Thread-safety: none. Its owner (PinnedHostMemory) guards it with its own
// mutex.
#ifndef OPENREG_PLUGINS_SIM_SUPPORT_ALLOCATION_TABLE_H_
#define OPENREG_PLUGINS_SIM_SUPPORT_ALLOCATION_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/container/btree_map.h"

namespace openreg::sim {

// One live block: [base, base + size).
struct Allocation {
  void* base = nullptr;
  uint64_t size = 0;

  // Bytes from `base` to `ptr`, which must lie inside the block.
  uint64_t OffsetOf(const void* ptr) const {
    return static_cast<uint64_t>(static_cast<const char*>(ptr) -
                                 static_cast<const char*>(base));
  }
  // True when [ptr, ptr + bytes) lies inside the block; `ptr` must.
  bool Holds(const void* ptr, uint64_t bytes) const {
    return bytes <= size - OffsetOf(ptr);
  }
};

class AllocationTable {
 public:
  // Every block is aligned to `alignment`, a power of two.
  explicit AllocationTable(size_t alignment);
  ~AllocationTable();

  AllocationTable(const AllocationTable&) = delete;
  AllocationTable& operator=(const AllocationTable&) = delete;

  // A new block of `size` (> 0) bytes, or nullptr when the host cannot
  // provide it.
  void* Allocate(size_t size);

  // The block containing `ptr`, which may point anywhere inside it.
  std::optional<Allocation> Find(const void* ptr) const;

  // Frees the block starting exactly at `base`. Returns false, changing
  // nothing, when no block starts there.
  bool Erase(void* base);

  // Sum of the sizes of all live blocks, as requested (alignment padding is
  // not counted, so capacity accounting matches what callers asked for).
  uint64_t bytes_in_use() const { return bytes_in_use_; }

 private:
  void FreeBlock(void* base) const;

  const size_t alignment_;
  // Keyed by base address: the block holding an interior pointer is the last
  // one whose base is <= that pointer.
  absl::btree_map<uintptr_t, uint64_t> blocks_;
  uint64_t bytes_in_use_ = 0;
};

}  // namespace openreg::sim

#endif  // OPENREG_PLUGINS_SIM_SUPPORT_ALLOCATION_TABLE_H_
