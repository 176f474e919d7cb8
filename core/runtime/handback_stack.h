// A stack that any number of threads push items onto, without a lock, and
// that one call empties whole: how work a driver's thread has finished goes
// back to a user thread to be destroyed (core/torch_runtime/stream_work.cc).
//
// Note [Handing work back without a lock]
// On a driver with threads of its own the worker hands back a record after
// every op. A mutex and a vector there cost four locked instructions and two
// allocations per op, on memory both threads write, so that every op moved
// their cache lines between the cores (docs/performance.md, "Where a
// threaded_sim step's CPU time goes"). Here a push is one compare-exchange
// on the head and a take one exchange; the items link through a member of
// their own, so nothing is allocated.
//
// Pushing one item and taking all of them has no ABA problem: a push's
// compare-exchange succeeds only while the head is still the item the pushed
// one links to, whatever happened in between. A push releases and a take
// acquires, so whatever a pusher wrote before pushing an item (the work it
// ran) is visible to the thread that takes it; the release sequence of the
// pushes carries that to every item under the taken head.
//
// Ownership: items pushed belong to the stack until taken, then to the taker.
// Thread-safety: Push() and TakeAll() may be called concurrently from any
// threads. An item's `Next` member is written by its pusher and read by its
// taker only.
#ifndef OPENREG_CORE_RUNTIME_HANDBACK_STACK_H_
#define OPENREG_CORE_RUNTIME_HANDBACK_STACK_H_

#include <atomic>

namespace openreg {

template <typename T, T* T::*Next>
class HandbackStack {
 public:
  HandbackStack() = default;
  HandbackStack(const HandbackStack&) = delete;
  HandbackStack& operator=(const HandbackStack&) = delete;

  void Push(T* item) {
    T* head = head_.load(std::memory_order_relaxed);
    do {
      item->*Next = head;
    } while (!head_.compare_exchange_weak(head, item, std::memory_order_release,
                                          std::memory_order_relaxed));
  }

  // Every item pushed so far, newest first, linked through `Next`; null when
  // there is none. An empty stack costs one plain load. A push that happens
  // before the call (for instance, one a synchronization saw finish) is seen
  // by that load, so it is taken.
  T* TakeAll() {
    if (head_.load(std::memory_order_relaxed) == nullptr) return nullptr;
    return head_.exchange(nullptr, std::memory_order_acquire);
  }

 private:
  std::atomic<T*> head_{nullptr};
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_HANDBACK_STACK_H_
