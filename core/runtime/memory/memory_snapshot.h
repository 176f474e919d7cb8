// The state of a device's caching allocator as torch.cuda.memory._snapshot
// reports it: every segment held from the driver, with its blocks in address
// order, and the allocation history (Note [Memory history]).
#ifndef OPENREG_CORE_RUNTIME_MEMORY_MEMORY_SNAPSHOT_H_
#define OPENREG_CORE_RUNTIME_MEMORY_MEMORY_SNAPSHOT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/runtime/memory/allocator_config.h"
#include "core/runtime/memory/block.h"
#include "core/runtime/memory/memory_history.h"

namespace openreg {

struct BlockSnapshot {
  uintptr_t address = 0;
  size_t size = 0;
  size_t requested = 0;  // 0 unless allocated
  BlockState state = BlockState::kFree;
  std::shared_ptr<void> frames;  // the allocation's stack, if recorded
};

struct SegmentSnapshot {
  int32_t device = 0;
  uintptr_t address = 0;
  size_t total_size = 0;
  size_t allocated_size = 0;  // blocks handed out
  size_t active_size = 0;     // those and freed blocks awaiting events
  size_t requested_size = 0;  // bytes asked for by the allocated blocks
  uint64_t stream = 0;        // current stream when the segment was made
  bool small = false;
  PrivatePoolId pool;  // {0, 0}: the device's own pool
  std::shared_ptr<void> frames;
  std::vector<BlockSnapshot> blocks;
};

struct MemorySnapshot {
  std::vector<SegmentSnapshot> segments;
  std::vector<std::vector<TraceEntry>> device_traces;  // by device
  AllocatorConfig settings;
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_MEMORY_SNAPSHOT_H_
