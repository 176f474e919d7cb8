// A block: a contiguous piece of one segment (one driver allocation), either
// handed out, waiting for events recorded by record_stream, or free in its
// pool. The blocks of a segment form a doubly linked list in address order,
// so freeing a block can merge it with free neighbours.
//
// Thread-safety: a block is owned by its DeviceMemoryPool and read or
// written only under that pool's mutex.
#ifndef OPENREG_CORE_RUNTIME_MEMORY_BLOCK_H_
#define OPENREG_CORE_RUNTIME_MEMORY_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>

#include "absl/container/inlined_vector.h"
#include "core/runtime/memory/memory_history.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

class DeviceMemoryPool;

// How much of one segment is free, whether its free blocks are merged or
// not: what statistics read (Note [Free memory counted as merged]).
struct SegmentUse {
  size_t size = 0;        // the segment's bytes
  size_t free_bytes = 0;  // in its free blocks
  int64_t free_runs = 0;  // runs of adjacent free blocks

  bool wholly_free() const { return free_bytes == size; }
};

enum class BlockState {
  kAllocated,       // handed out
  kAwaitingEvents,  // freed; streams it was recorded on have not caught up
  kFree,            // in its pool's free set
  kFreeUnmerged,    // freed and kept whole in its size's reuse list, not yet
                    // merged with free neighbours (Note [Reuse before merge])
  kUntracked,       // freed; a stream's use of it has no event yet (the record
                    // failed): recorded again at the pool's next miss or
                    // synchronization, not reused until then
};

struct Block {
  DeviceMemoryPool* pool = nullptr;
  void* ptr = nullptr;
  size_t size = 0;       // bytes this block spans
  size_t requested = 0;  // bytes asked for, while allocated
  bool small = false;    // small pool or large pool
  BlockState state = BlockState::kFree;
  Block* prev = nullptr;  // neighbours in the same segment
  Block* next = nullptr;
  SegmentUse* segment = nullptr;  // the pool's record of that segment
  // The stream whose order makes reuse safe (Note [Stream-ordered reuse]):
  // set while a block is allocated from the host on that stream, and kept
  // once it is freed until that stream is known to have run everything
  // enqueued before the free. Null for a block nothing may still be using.
  openreg_stream stream = nullptr;
  // When a stream-ordered block was freed, in the pool's count of such frees.
  uint64_t free_stamp = 0;
  // Streams named by Tensor.record_stream while allocated; on free, an event
  // is recorded on each and the block is reused only once all have fired.
  absl::InlinedVector<openreg_stream, 1> stream_uses;
  int32_t pending_events = 0;
  // The next block of the same size while kFreeUnmerged.
  Block* next_unmerged = nullptr;
  // Where it was allocated, while recording (Note [Memory history]).
  HistoryContext history;

  // Part of a segment that holds other blocks too.
  bool is_split() const { return prev != nullptr || next != nullptr; }
  // Free memory, merged with its free neighbours or not.
  bool is_free() const {
    return state == BlockState::kFree || state == BlockState::kFreeUnmerged;
  }
  char* begin() const { return static_cast<char*>(ptr); }
};

// Where a block with these fields sorts in a free set: what searches of the
// sets look up, so that a search builds no Block.
struct FreeSetKey {
  openreg_stream stream = nullptr;
  size_t size = 0;
  const void* ptr = nullptr;

  // Past every block of `stream`.
  static FreeSetKey After(openreg_stream stream) {
    return {stream, std::numeric_limits<size_t>::max(),
            reinterpret_cast<const void*>(
                std::numeric_limits<uintptr_t>::max())};
  }
};

// Free-set order: the blocks of each stream together (null, the blocks any
// stream may take, first), and within them best fit is the first block not
// smaller than the request; ties go to the lowest address, which keeps reuse
// deterministic.
struct BlockByStreamSizeAddress {
  using is_transparent = void;  // the sets are searched by FreeSetKey

  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return Less(KeyOf(a), KeyOf(b));
  }

 private:
  static FreeSetKey KeyOf(const Block* block) {
    return {block->stream, block->size, block->ptr};
  }
  static const FreeSetKey& KeyOf(const FreeSetKey& key) { return key; }
  static bool Less(const FreeSetKey& a, const FreeSetKey& b) {
    if (a.stream != b.stream) {
      return std::less<const void*>()(a.stream, b.stream);
    }
    if (a.size != b.size) return a.size < b.size;
    return std::less<const void*>()(a.ptr, b.ptr);
  }
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_BLOCK_H_
