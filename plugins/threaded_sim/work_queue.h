// A stream's FIFO of work items, in pooled nodes: a launch allocates nothing
// once the stream has run as many items at once as it now holds.
//
// Items live in a singly linked list of nodes; a popped item's node goes to
// a list of spare nodes that the next Push() reuses. At most kMaxSpareNodes
// are kept, so a burst of queued work does not pin its memory for the life of
// the stream.
//
// Ownership: owns its nodes and the items in them.
// Thread-safety: none; the stream's mutex guards its queue.
#ifndef OPENREG_PLUGINS_THREADED_SIM_WORK_QUEUE_H_
#define OPENREG_PLUGINS_THREADED_SIM_WORK_QUEUE_H_

#include <cstddef>

#include "plugins/threaded_sim/work_item.h"

namespace openreg::threaded_sim {

class WorkQueue {
 public:
  static constexpr size_t kMaxSpareNodes = 256;

  WorkQueue() = default;
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  bool empty() const { return head_ == nullptr; }
  size_t size() const { return size_; }
  // The first item; the queue must not be empty.
  const WorkItem& front() const { return head_->item; }

  void Push(WorkItem item);
  // Removes and returns the first item; the queue must not be empty.
  WorkItem Pop();
  // Moves every queued item, in order, into `*into`, which must be empty;
  // spare nodes stay here.
  void MoveItemsTo(WorkQueue* into);

  // Nodes allocated so far (queued or spare); for tests.
  size_t nodes_allocated() const { return nodes_allocated_; }
  size_t spare_nodes() const { return spare_count_; }

 private:
  struct Node {
    WorkItem item;
    Node* next = nullptr;
  };
  static void DeleteList(Node* node);

  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  size_t size_ = 0;
  Node* spare_ = nullptr;
  size_t spare_count_ = 0;
  size_t nodes_allocated_ = 0;
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_WORK_QUEUE_H_
