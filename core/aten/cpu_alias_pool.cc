#include "core/aten/cpu_alias_pool.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/StorageImpl.h>
#include <c10/core/TensorImpl.h>

#include <atomic>
#include <cstdint>

namespace openreg {
namespace {

// Weak references to `storage`'s impl, plus one while strong ones exist.
// Storage exposes no such count; borrow the impl's without touching it.
uint32_t StorageWeakUseCount(const c10::Storage& storage) {
  auto borrowed = c10::intrusive_ptr<c10::StorageImpl>::reclaim(
      storage.unsafeGetStorageImpl());
  const uint32_t count = borrowed.weak_use_count();
  borrowed.release();
  return count;
}

// The storage of a pooled pair. A pair is a plain CPU tensor, whose storage
// access never throws: TensorImpl::storage() would check that out of line,
// reading a flag from another cache line, several times per op.
const c10::Storage& PairStorage(const at::Tensor& pair) {
  return pair.unsafeGetTensorImpl()->unsafe_storage();
}

}  // namespace

CpuAliasPool& CpuAliasPool::ForThisThread() {
  thread_local CpuAliasPool pool;
  return pool;
}

at::Tensor CpuAliasPool::MakeFresh(void* address, size_t nbytes,
                                   caffe2::TypeMeta dtype) {
  // Non-owning; resizable through the CPU allocator so an out= kernel that
  // must grow its output can, and the caller notices the new memory.
  c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes,
                       c10::DataPtr(address, c10::Device(c10::DeviceType::CPU)),
                       c10::GetCPUAllocator(), /*resizable=*/true);
  return at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU), dtype);
}

bool CpuAliasPool::Idle(const at::Tensor& pair) {
  // Only the pool holds the tensor, and only the tensor its storage.
  const c10::Storage& storage = PairStorage(pair);
  return pair.use_count() == 1 && pair.weak_use_count() == 1 &&
         storage.use_count() == 1 && StorageWeakUseCount(storage) == 1;
}

CpuAliasPool::Reuse CpuAliasPool::Check(const at::Tensor& pair,
                                        c10::DispatchKeySet keys) {
  if (!Idle(pair)) return Reuse::kBusy;
  const c10::Storage& storage = PairStorage(pair);
  // Order the last user's accesses (possibly on another thread, which
  // released its reference with release semantics) before the reuse.
  std::atomic_thread_fence(std::memory_order_acquire);
  c10::TensorImpl* impl = pair.unsafeGetTensorImpl();
  impl->_set_conj(false);
  impl->_set_neg(false);
  const c10::StorageImpl* storage_impl = storage.unsafeGetStorageImpl();
  const bool unchanged =
      impl->key_set() == keys && !impl->is_wrapped_number() &&
      impl->autograd_meta() == nullptr &&
      impl->pyobj_slot()->load_pyobj() == nullptr &&
      !impl->has_symbolic_sizes_strides() &&
      impl->get_backend_meta_intrusive_ptr() == nullptr &&
      storage_impl->pyobj_slot()->load_pyobj() == nullptr &&
      storage_impl->resizable() &&
      storage_impl->allocator() == c10::GetCPUAllocator();
  return unchanged ? Reuse::kReady : Reuse::kChanged;
}

at::Tensor CpuAliasPool::Take(void* address, size_t nbytes,
                              caffe2::TypeMeta dtype, bool first_of_call) {
  Ring& ring = rings_[c10::InferenceMode::is_enabled() ? 1 : 0];
  if (first_of_call) {
    const at::Tensor& last_start = ring.pairs[ring.call_start];
    if (last_start.defined() && Idle(last_start)) ring.next = ring.call_start;
    ring.call_start = ring.next;
  }
  const size_t slot = ring.next;
  at::Tensor& pair = ring.pairs[slot];
  if (pair.defined()) {
    switch (Check(pair, ring.keys)) {
      case Reuse::kBusy:
        return MakeFresh(address, nbytes, dtype);
      case Reuse::kChanged:
        pair.reset();
        break;
      case Reuse::kReady: {
        c10::StorageImpl* storage = PairStorage(pair).unsafeGetStorageImpl();
        // Frees whatever memory a kernel grew the storage into last time.
        storage->set_data_ptr_noswap(
            c10::DataPtr(address, c10::Device(c10::DeviceType::CPU)));
        storage->set_nbytes(nbytes);
        c10::TensorImpl* impl = pair.unsafeGetTensorImpl();
        if (impl->dtype() != dtype) {
          impl->set_storage_and_dtype(PairStorage(pair), dtype);
        }
        ring.next = (slot + 1) % kPairsPerRing;
        return pair;
      }
    }
  }
  pair = MakeFresh(address, nbytes, dtype);
  ring.keys = pair.key_set();
  ring.next = (slot + 1) % kPairsPerRing;
  return pair;
}

}  // namespace openreg
