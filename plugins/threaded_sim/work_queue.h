// A stream's FIFO of work items: one thread pushes and another pops at the
// same time without a lock, and a launch allocates nothing once the stream
// has held as many items at once as it now holds.
//
// Note [A queue the worker pops without a lock]
// The queue used to be a plain list under the stream's mutex, which the
// user thread took to push and the worker took to pop and again to finish:
// with the two threads on different cores, the mutex's cache line and the
// list's moved from core to core several times per op, each move a stall of
// 80 ns when the vCPUs share a cache and 350 ns when they do not (bench
// core_to_core_latency). A GPU's command ring avoids this: the host writes
// the command and then the ring's write index, the device reads both and
// writes only its read index, and neither side locks. This queue is that
// ring as a linked list, so that it never fills up (a worker thread must
// never wait for room, Note [Queue depth] in stream.h):
//   - The list always holds one consumed node, `head_`, which the consumer
//     owns; the items are in the nodes after it. A push links a node after
//     `tail_` with a release store, a pop reads `head_->next` with an
//     acquire load, moves the item out and makes that node the new head.
//   - Consumed nodes are recycled by the producer: nodes from `oldest_` up
//     to (not including) the consumer's head are free. The producer keeps a
//     copy of the consumer's head and reads the real one (published with a
//     release store at each pop) only when its copy says no node is free,
//     and only once it has a few nodes (kNodesBeforeRecycling), so that it
//     reads that line once per few pushes.
//   - So each side writes its own cache lines: the producer the node it
//     fills and its own fields, the consumer its head; an item's node is the
//     one line that has to travel, as a ring slot does.
// Written here rather than taken from a library: abseil has no such queue,
// and boost's lock-free single-producer queue is bounded, while a worker
// thread must never wait for room (and boost is not a dependency).
// One producer and one consumer at a time: the stream serializes producers
// with a mutex only they take, and its worker is the only consumer (a stop
// drains the queue under a mutex it shares with the worker).
//
// Ownership: owns its nodes and the items in them; items never popped are
// destroyed with the queue.
// Thread-safety: Push() and nodes_allocated() on one thread at a time (the
// producer), TryPop() on one thread at a time (the consumer), the two sides
// concurrently.
#ifndef OPENREG_PLUGINS_THREADED_SIM_WORK_QUEUE_H_
#define OPENREG_PLUGINS_THREADED_SIM_WORK_QUEUE_H_

#include <atomic>
#include <cstddef>

#include "plugins/threaded_sim/work_item.h"

namespace openreg::threaded_sim {

class WorkQueue {
 public:
  // Free nodes are kept for reuse while at most `nodes_kept` nodes are
  // allocated; beyond that, a push frees them (after a burst).
  explicit WorkQueue(size_t nodes_kept);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Producer: appends `item`.
  void Push(WorkItem item);
  // Consumer: moves the first item into `*item` and returns true, or returns
  // false when the queue is empty.
  bool TryPop(WorkItem* item);

  // Producer: nodes allocated, queued, consumed or free (at least
  // kNodesBeforeRecycling once that many items were pushed, else one more
  // than the most items held at once; capped by `nodes_kept`); for tests.
  size_t nodes_allocated() const { return nodes_allocated_; }

  // Nodes allocated before the producer starts recycling consumed ones.
  static constexpr size_t kNodesBeforeRecycling = 16;

 private:
  // On cache lines of its own: the two threads pass a node back and forth,
  // and must not drag a neighbouring heap object along.
  struct alignas(64) Node {
    WorkItem item;
    std::atomic<Node*> next{nullptr};
  };
  // The oldest free node, unlinked from the free ones, or null when the
  // consumer still holds every node (its head is read anew only then).
  Node* TakeFreeNode();
  // A free node, or a new one.
  Node* TakeNode();
  // Deletes free nodes while more than nodes_kept_ are allocated.
  void TrimFreeNodes();

  const size_t nodes_kept_;
  // The consumer's side, on a cache line of its own.
  alignas(64) Node* head_;
  std::atomic<Node*> published_head_;
  // The producer's side.
  alignas(64) Node* tail_;
  Node* oldest_;         // the oldest node not known to be in use
  Node* head_copy_;      // published_head_ as the producer last read it
  size_t nodes_allocated_ = 1;
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_WORK_QUEUE_H_
