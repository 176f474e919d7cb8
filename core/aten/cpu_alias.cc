#include "core/aten/cpu_alias.h"

#include <c10/core/TensorImpl.h>

#include "core/aten/cpu_alias_pool.h"

namespace openreg {
namespace {

// The index of the entry of `entries` whose `member`'s impl is `impl`, or -1:
// linear while `entries` is small, through `index` (kept in step by
// IndexEntry) once it is not.
template <typename Entries, typename Impl, typename Index, typename GetImpl>
ptrdiff_t Find(const Entries& entries, const Impl* impl, const Index& index,
               size_t linear_limit, GetImpl get_impl) {
  if (entries.size() <= linear_limit) {
    for (size_t i = 0; i < entries.size(); ++i) {
      if (get_impl(entries[i]) == impl) return static_cast<ptrdiff_t>(i);
    }
    return -1;
  }
  auto it = index.find(impl);
  return it == index.end() ? -1 : static_cast<ptrdiff_t>(it->second);
}

// Keeps `index` covering every entry once `entries` outgrows linear search.
template <typename Entries, typename Index, typename GetImpl>
void IndexEntries(const Entries& entries, Index& index, size_t linear_limit,
                  GetImpl get_impl) {
  if (entries.size() <= linear_limit) return;
  if (index.empty()) {
    for (size_t i = 0; i < entries.size(); ++i) {
      index.emplace(get_impl(entries[i]), i);
    }
  } else {
    index.emplace(get_impl(entries.back()), entries.size() - 1);
  }
}

}  // namespace

ptrdiff_t CpuAliases::FindTensor(const c10::TensorImpl* impl) const {
  return Find(tensors_, impl, tensor_index_, kLinearSearchLimit,
              [](const TensorAlias& entry) { return entry.original_impl; });
}

ptrdiff_t CpuAliases::FindStorage(const c10::StorageImpl* impl) const {
  return Find(storages_, impl, storage_index_, kLinearSearchLimit,
              [](const StorageAlias& entry) {
                return entry.original_impl;
              });
}

at::Tensor CpuAliases::Alias(const at::Tensor& tensor) {
  // One alias per tensor: kernels compare arguments by identity (an out=
  // argument that is also an input is updated in place, never resized).
  if (const ptrdiff_t found = FindTensor(tensor.unsafeGetTensorImpl());
      found >= 0) {
    // A borrowed alias is alive: the caller holds the one it was given.
    return at::Tensor(
        c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>::
            reclaim_copy(tensors_[found].cpu_impl));
  }
  const c10::Storage& storage = tensor.storage();
  ptrdiff_t storage_entry = FindStorage(storage.unsafeGetStorageImpl());
  at::Tensor alias;
  if (storage_entry < 0) {
    // The first tensor of its storage: a recycled CPU tensor and storage
    // pair (Note [Recycled CPU aliases]).
    alias = CpuAliasPool::ForThisThread().Take(
        ExecutionAddress(storage), storage.nbytes(), tensor.dtype(),
        /*first_of_call=*/storages_.empty());
    // A pooled CPU tensor's storage access never throws (cpu_alias_pool.cc).
    const c10::Storage& cpu_storage =
        alias.unsafeGetTensorImpl()->unsafe_storage();
    storages_.push_back(StorageAlias{
        storage.unsafeGetStorageImpl(),
        NeedsNoReference(storage) ? c10::Storage() : storage,
        cpu_storage.unsafeGetStorageImpl(),
        originals_ == Originals::kHeld ? cpu_storage : c10::Storage()});
    IndexEntries(storages_, storage_index_, kLinearSearchLimit,
                 [](const StorageAlias& entry) {
                   return entry.original_impl;
                 });
  } else {
    // Another view of a storage aliased already: a fresh tensor over the
    // same CPU storage, alive (when borrowed) through the caller's alias of
    // the first view.
    alias = at::detail::make_tensor<c10::TensorImpl>(
        c10::Storage(c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(
            storages_[storage_entry].cpu_impl)),
        c10::DispatchKeySet(c10::DispatchKey::CPU), tensor.dtype());
  }
  c10::TensorImpl* alias_impl = alias.unsafeGetTensorImpl();
  // A recycled alias often comes back for a tensor of its last geometry
  // (the same op on the same shapes, step after step): the flags
  // set_sizes_and_strides would recompute depend on nothing else.
  if (alias_impl->sizes() != tensor.sizes() ||
      alias_impl->strides() != tensor.strides() ||
      alias_impl->storage_offset() != tensor.storage_offset()) {
    alias_impl->set_sizes_and_strides(tensor.sizes(), tensor.strides(),
                                      tensor.storage_offset());
  }
  // The lazy conjugate and negative bits are part of the value: kernels the
  // Conjugate/Negative keys let through (copies, matmuls) read them.
  if (tensor.is_conj()) alias._set_conj(true);
  if (tensor.is_neg()) alias._set_neg(true);
  const bool held = originals_ == Originals::kHeld;
  tensors_.push_back(TensorAlias{tensor.unsafeGetTensorImpl(),
                                 held ? tensor : at::Tensor(), alias_impl,
                                 held ? alias : at::Tensor()});
  IndexEntries(tensors_, tensor_index_, kLinearSearchLimit,
               [](const TensorAlias& entry) { return entry.original_impl; });
  return alias;
}

bool CpuAliases::NeedsNoReference(const c10::Storage& storage) const {
  return work_stream_.ordered_on != nullptr &&
         work_stream_.ordered_on(storage, work_stream_.stream);
}

const at::Tensor* CpuAliases::OriginalOf(const at::Tensor& cpu_tensor) const {
  // Asked once per result of the few ops that run synchronously: linear.
  const c10::TensorImpl* impl = cpu_tensor.unsafeGetTensorImpl();
  for (const TensorAlias& entry : tensors_) {
    if (entry.cpu_impl == impl) {
      return entry.original.defined() ? &entry.original : nullptr;
    }
  }
  return nullptr;
}

const c10::Storage* CpuAliases::OriginalStorageOf(
    const at::Tensor& cpu_tensor) const {
  const c10::StorageImpl* cpu_storage =
      cpu_tensor.storage().unsafeGetStorageImpl();
  for (const StorageAlias& alias : storages_) {
    if (alias.cpu_impl == cpu_storage) {
      return alias.original ? &alias.original : nullptr;
    }
  }
  return nullptr;
}

void CpuAliases::ForgetOriginalTensors() {
  tensors_.clear();
  tensor_index_.clear();
}

}  // namespace openreg
