// When a producer must wait for room in a stream's queue, and for what.
//
// Note [Room counted from two reads]
// A producer reads the stream's enqueued count, then its finished count,
// without a lock. Other producers may enqueue, and the worker finish, in
// between: the finished count it reads can then be past the enqueued count
// it read. Subtracting the two as unsigned numbers wrapped around to a huge
// backlog, and the producer waited for a target below zero, which also
// wrapped: it waited forever while the worker sat idle (found under
// ThreadSanitizer by caching_device_allocator_test's stress test).
#ifndef OPENREG_PLUGINS_THREADED_SIM_QUEUE_ROOM_H_
#define OPENREG_PLUGINS_THREADED_SIM_QUEUE_ROOM_H_

#include <cstdint>
#include <optional>

namespace openreg::threaded_sim {

// The finished count a producer waits for before it enqueues, given the
// enqueued and finished counts it read (in that order) and the queue's
// depth; nullopt when there is room. It waits until half the queue has
// drained, not for a single slot, so that it is woken once per half queue.
constexpr std::optional<uint64_t> FinishedCountToWaitFor(uint64_t enqueued,
                                                         uint64_t finished,
                                                         uint64_t depth) {
  if (finished >= enqueued || enqueued - finished < depth) return std::nullopt;
  return enqueued - depth / 2;
}

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_QUEUE_ROOM_H_
