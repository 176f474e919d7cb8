#include "plugins/sim_support/allocation_table.h"

#include <new>

namespace openreg::sim {

AllocationTable::AllocationTable(size_t alignment) : alignment_(alignment) {}

AllocationTable::~AllocationTable() {
  for (const auto& [base, size] : blocks_) {
    FreeBlock(reinterpret_cast<void*>(base));
  }
}

void* AllocationTable::Allocate(size_t size) {
  void* block =
      ::operator new(size, std::align_val_t{alignment_}, std::nothrow);
  if (block == nullptr) return nullptr;
  blocks_.emplace(reinterpret_cast<uintptr_t>(block), size);
  bytes_in_use_ += size;
  return block;
}

std::optional<Allocation> AllocationTable::Find(const void* ptr) const {
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  auto it = blocks_.upper_bound(address);
  if (it == blocks_.begin()) return std::nullopt;
  --it;
  const auto [base, size] = *it;
  if (address - base >= size) return std::nullopt;
  return Allocation{reinterpret_cast<void*>(base), size};
}

bool AllocationTable::Erase(void* base) {
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(base));
  if (it == blocks_.end()) return false;
  bytes_in_use_ -= it->second;
  blocks_.erase(it);
  FreeBlock(base);
  return true;
}

void AllocationTable::FreeBlock(void* base) const {
  ::operator delete(base, std::align_val_t{alignment_});
}

}  // namespace openreg::sim
