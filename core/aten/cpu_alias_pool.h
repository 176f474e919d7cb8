// CPU alias tensors recycled from one operator call to the next.
//
// Note [Recycled CPU aliases]
// Every op that runs a CPU kernel on openreg memory wraps each distinct
// storage it touches in a CPU tensor over a CPU storage of its own
// (core/aten/cpu_alias.h). Building and destroying that pair (two heap
// objects, a version counter, their reference counts and destructors) was
// about 1,400 instructions per storage, the largest single cost of a tiny
// structured op such as a 4x4 matmul (docs/performance.md).
//
// A pool instead keeps the pairs it made and hands one out again once
// nothing else references it: once the work record that held it is gone.
// A recycled pair must be indistinguishable from a fresh one, so a pair is
// handed out again only when
//  - no one else holds the tensor or its storage, strongly or weakly (a
//    kernel that kept a view, or a collective still running, keeps it busy);
//  - it has no Python object, no autograd or backend metadata and no
//    symbolic sizes, is not a wrapped number, its dispatch keys are those a
//    fresh pair gets (which also covers the conjugate and negative bits,
//    reset first), and its storage is still a resizable one of the CPU
//    allocator.
// It then gets the new address, size, dtype and (by the caller) geometry,
// everything a fresh pair is built from. A pair that fails the second test
// is dropped, not recycled; one that fails only the first waits, and the
// caller makes a fresh, unpooled pair meanwhile.
//
// Pairs are kept in a ring per thread and per inference mode (a tensor made
// in inference mode has other keys and no version counter). A call starts
// where the previous call started if that pair is idle again, as it always
// is on a synchronous driver: the same few pairs, warm in the cache, then
// serve every call (a ring walked round would touch a cold pair each time,
// about 25 more L1 misses per 4x4 matmul). Otherwise the call goes on round
// the ring: work completes in order, so the oldest pair is the first to free
// up. When the next pair is busy (many ops in flight on an asynchronous
// driver) the pool is not searched further.
//
// Thread-safety: each thread has its own pool. A pair may be released on
// another thread (a work record reaped elsewhere); the reference counts
// decide, and an acquire fence after reading them orders that thread's last
// use before the reuse.
#ifndef OPENREG_CORE_ATEN_CPU_ALIAS_POOL_H_
#define OPENREG_CORE_ATEN_CPU_ALIAS_POOL_H_

#include <ATen/core/Tensor.h>
#include <c10/core/DispatchKeySet.h>

#include <array>
#include <cstddef>

namespace openreg {

class CpuAliasPool {
 public:
  // The calling thread's pool.
  static CpuAliasPool& ForThisThread();

  // A CPU tensor of `dtype` over a CPU storage of its own holding `nbytes`
  // at `address` (not owned; resizable through the CPU allocator), with no
  // conjugate or negative bit and sizes still to be set by the caller.
  // `first_of_call`: the first pair an operator call takes.
  at::Tensor Take(void* address, size_t nbytes, caffe2::TypeMeta dtype,
                  bool first_of_call);

 private:
  static constexpr size_t kPairsPerRing = 32;

  struct Ring {
    std::array<at::Tensor, kPairsPerRing> pairs;
    // The keys of a fresh pair in this ring's mode, once one is made.
    c10::DispatchKeySet keys;
    size_t next = 0;
    // Where the last call's first pair was taken.
    size_t call_start = 0;
  };

  // A fresh pair, as Take makes when it has none to recycle.
  static at::Tensor MakeFresh(void* address, size_t nbytes,
                              caffe2::TypeMeta dtype);

  enum class Reuse { kReady, kBusy, kChanged };
  // Whether only the pool references `pair` and its storage.
  static bool Idle(const at::Tensor& pair);
  static Reuse Check(const at::Tensor& pair, c10::DispatchKeySet keys);

  std::array<Ring, 2> rings_;  // by whether inference mode is on
};

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_CPU_ALIAS_POOL_H_
