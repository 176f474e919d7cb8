#include "plugins/threaded_sim/work_queue.h"

#include <algorithm>
#include <utility>

namespace openreg::threaded_sim {

WorkQueue::WorkQueue(size_t nodes_kept) : nodes_kept_(nodes_kept) {
  Node* first = new Node;
  head_ = first;
  published_head_.store(first, std::memory_order_relaxed);
  tail_ = first;
  oldest_ = first;
  head_copy_ = first;
}

WorkQueue::~WorkQueue() {
  Node* node = oldest_;
  while (node != nullptr) {
    Node* next = node->next.load(std::memory_order_relaxed);
    delete node;
    node = next;
  }
}

WorkQueue::Node* WorkQueue::TakeFreeNode() {
  if (oldest_ == head_copy_) {
    // Acquire: the consumer has moved the items out of the nodes it passed.
    head_copy_ = published_head_.load(std::memory_order_acquire);
    if (oldest_ == head_copy_) return nullptr;
  }
  Node* node = oldest_;
  oldest_ = node->next.load(std::memory_order_relaxed);
  return node;
}

WorkQueue::Node* WorkQueue::TakeNode() {
  // The first kNodesBeforeRecycling nodes are allocated without asking the
  // consumer how far it got: its head is a line it writes at every pop, and
  // with a few nodes in hand the producer reads it once per few pushes
  // rather than at every one.
  const bool growing =
      oldest_ == head_copy_ &&
      nodes_allocated_ < std::min(kNodesBeforeRecycling, nodes_kept_);
  Node* node = growing ? nullptr : TakeFreeNode();
  if (node == nullptr) {
    ++nodes_allocated_;
    return new Node;
  }
  node->next.store(nullptr, std::memory_order_relaxed);
  return node;
}

void WorkQueue::TrimFreeNodes() {
  while (nodes_allocated_ > nodes_kept_) {
    Node* node = TakeFreeNode();
    if (node == nullptr) return;
    delete node;
    --nodes_allocated_;
  }
}

void WorkQueue::Push(WorkItem item) {
  if (nodes_allocated_ > nodes_kept_) TrimFreeNodes();
  Node* node = TakeNode();
  node->item = std::move(item);
  // Release: the consumer that sees the link sees the item.
  tail_->next.store(node, std::memory_order_release);
  tail_ = node;
}

bool WorkQueue::TryPop(WorkItem* item) {
  Node* next = head_->next.load(std::memory_order_acquire);
  if (next == nullptr) return false;
  *item = std::move(next->item);
  // A consumed node keeps no closure and no event reference.
  next->item.compute = nullptr;
  next->item.event.reset();
  head_ = next;
  // Release: the producer that reuses the nodes before `next` sees them
  // emptied.
  published_head_.store(next, std::memory_order_release);
  return true;
}

}  // namespace openreg::threaded_sim
