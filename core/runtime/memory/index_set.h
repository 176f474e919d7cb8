// A set of the indices below a fixed bound, one bit each, walked in
// ascending order at a cost of one word per 64 indices plus one step per
// member. The device memory pool marks with it which of its 2,048 small
// block lists may hold blocks, so that walking the lists costs what they
// hold rather than their number (Note [Reuse before merge]).
#ifndef OPENREG_CORE_RUNTIME_MEMORY_INDEX_SET_H_
#define OPENREG_CORE_RUNTIME_MEMORY_INDEX_SET_H_

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace openreg {

template <size_t kBound>
class IndexSet {
 public:
  void Insert(size_t index) { words_[index / 64] |= Bit(index); }
  void Erase(size_t index) { words_[index / 64] &= ~Bit(index); }
  bool Contains(size_t index) const {
    return (words_[index / 64] & Bit(index)) != 0;
  }

  // Calls `visit(index)` for each member in ascending order. `visit` may
  // erase the index it is given; members it inserts may or may not be
  // visited.
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    for (size_t word = 0; word < kWords; ++word) {
      for (uint64_t bits = words_[word]; bits != 0; bits &= bits - 1) {
        visit(word * 64 + static_cast<size_t>(std::countr_zero(bits)));
      }
    }
  }

 private:
  static constexpr size_t kWords = (kBound + 63) / 64;
  static constexpr uint64_t Bit(size_t index) {
    return uint64_t{1} << (index % 64);
  }

  std::array<uint64_t, kWords> words_{};
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_INDEX_SET_H_
