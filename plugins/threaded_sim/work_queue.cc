#include "plugins/threaded_sim/work_queue.h"

#include <utility>

namespace openreg::threaded_sim {

WorkQueue::~WorkQueue() {
  DeleteList(head_);
  DeleteList(spare_);
}

void WorkQueue::DeleteList(Node* node) {
  while (node != nullptr) {
    Node* next = node->next;
    delete node;
    node = next;
  }
}

void WorkQueue::Push(WorkItem item) {
  Node* node = spare_;
  if (node != nullptr) {
    spare_ = node->next;
    --spare_count_;
    node->next = nullptr;
  } else {
    node = new Node;
    ++nodes_allocated_;
  }
  node->item = std::move(item);
  if (tail_ == nullptr) {
    head_ = node;
  } else {
    tail_->next = node;
  }
  tail_ = node;
  ++size_;
}

WorkItem WorkQueue::Pop() {
  Node* node = head_;
  head_ = node->next;
  if (head_ == nullptr) tail_ = nullptr;
  --size_;
  WorkItem item = std::move(node->item);
  // A spare node holds no closure and no event reference.
  node->item.compute = nullptr;
  if (spare_count_ < kMaxSpareNodes) {
    node->next = spare_;
    spare_ = node;
    ++spare_count_;
  } else {
    delete node;
    --nodes_allocated_;
  }
  return item;
}

void WorkQueue::MoveItemsTo(WorkQueue* into) {
  into->head_ = std::exchange(head_, nullptr);
  into->tail_ = std::exchange(tail_, nullptr);
  into->size_ = std::exchange(size_, 0);
  into->nodes_allocated_ += into->size_;
  nodes_allocated_ -= into->size_;
}

}  // namespace openreg::threaded_sim
