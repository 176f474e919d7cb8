#include "core/distributed/borrowed_device_memory.h"

#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>

#include <utility>

namespace openreg {

at::Tensor BorrowDeviceMemory(const at::Tensor& tensor) {
  if (!tensor.defined() || tensor.layout() != c10::kStrided ||
      tensor.device().type() != c10::DeviceType::PrivateUse1 ||
      !tensor.has_storage() || tensor.is_quantized()) {
    return tensor;
  }
  const c10::Storage& owner = tensor.storage();
  // A DataPtr without a deleter frees nothing when the borrowed storage goes.
  c10::Storage borrowed(c10::Storage::use_byte_size_t(), owner.nbytes(),
                        c10::DataPtr(const_cast<void*>(owner.data()),
                                     owner.device()),
                        /*allocator=*/nullptr, /*resizable=*/false);
  at::Tensor view = at::detail::make_tensor<c10::TensorImpl>(
      std::move(borrowed),
      c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), tensor.dtype());
  view.unsafeGetTensorImpl()->set_sizes_and_strides(
      tensor.sizes(), tensor.strides(), tensor.storage_offset());
  view._set_conj(tensor.is_conj());
  view._set_neg(tensor.is_neg());
  return view;
}

std::vector<at::Tensor> BorrowDeviceMemory(
    const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> views;
  views.reserve(tensors.size());
  for (const at::Tensor& tensor : tensors) {
    views.push_back(BorrowDeviceMemory(tensor));
  }
  return views;
}

std::vector<std::vector<at::Tensor>> BorrowDeviceMemory(
    const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<std::vector<at::Tensor>> views;
  views.reserve(lists.size());
  for (const auto& list : lists) views.push_back(BorrowDeviceMemory(list));
  return views;
}

}  // namespace openreg
