#include "core/aten/cpu_alias.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/TensorImpl.h>

namespace openreg {

at::Tensor CpuAliases::Alias(const at::Tensor& tensor) {
  // One alias per tensor: kernels compare arguments by identity (an out=
  // argument that is also an input is updated in place, never resized).
  if (auto it = aliases_.find(tensor.unsafeGetTensorImpl());
      it != aliases_.end()) {
    return it->second;
  }
  const c10::Storage& storage = tensor.storage();
  auto [it, inserted] = storages_.try_emplace(storage.unsafeGetStorageImpl());
  if (inserted) {
    it->second.original = storage;
    // Non-owning; resizable through the CPU allocator so an out= kernel that
    // must grow its output can, and the caller notices the new memory.
    it->second.cpu = c10::Storage(
        c10::Storage::use_byte_size_t(), storage.nbytes(),
        c10::DataPtr(const_cast<void*>(storage.data()),
                     c10::Device(c10::DeviceType::CPU)),
        c10::GetCPUAllocator(), /*resizable=*/true);
  }
  at::Tensor alias = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(it->second.cpu), c10::DispatchKeySet(c10::DispatchKey::CPU),
      tensor.dtype());
  alias.unsafeGetTensorImpl()->set_sizes_and_strides(
      tensor.sizes(), tensor.strides(), tensor.storage_offset());
  // The lazy conjugate and negative bits are part of the value: kernels the
  // Conjugate/Negative keys let through (copies, matmuls) read them.
  alias._set_conj(tensor.is_conj());
  alias._set_neg(tensor.is_neg());
  tensors_.emplace(alias.unsafeGetTensorImpl(), tensor);
  aliases_.emplace(tensor.unsafeGetTensorImpl(), alias);
  return alias;
}

const at::Tensor* CpuAliases::OriginalOf(const at::Tensor& cpu_tensor) const {
  auto it = tensors_.find(cpu_tensor.unsafeGetTensorImpl());
  return it == tensors_.end() ? nullptr : &it->second;
}

const c10::Storage* CpuAliases::OriginalStorageOf(
    const at::Tensor& cpu_tensor) const {
  const c10::StorageImpl* cpu_storage =
      cpu_tensor.storage().unsafeGetStorageImpl();
  for (const auto& [key, alias] : storages_) {
    if (alias.cpu.unsafeGetStorageImpl() == cpu_storage) return &alias.original;
  }
  return nullptr;
}

void CpuAliases::ForgetOriginalTensors() {
  tensors_.clear();
  aliases_.clear();
}

}  // namespace openreg
