// Growing an openreg storage in place, for resize_ and for PyTorch's
// resizePrivateUse1Bytes hook: one implementation serves both.
#ifndef OPENREG_CORE_TORCH_RUNTIME_STORAGE_RESIZE_H_
#define OPENREG_CORE_TORCH_RUNTIME_STORAGE_RESIZE_H_

#include <c10/core/Storage.h>

namespace openreg {

// Gives `storage` `new_size` bytes: a new device allocation on the storage's
// device, the old bytes (as many as fit) copied over in stream order.
void ResizeStorageBytes(const c10::Storage& storage, size_t new_size);

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_STORAGE_RESIZE_H_
