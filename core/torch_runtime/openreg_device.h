// How openreg appears to PyTorch: the PrivateUse1 device type and dispatch
// key, named once for every file that builds openreg devices or tensors.
#ifndef OPENREG_CORE_TORCH_RUNTIME_OPENREG_DEVICE_H_
#define OPENREG_CORE_TORCH_RUNTIME_OPENREG_DEVICE_H_

#include <c10/core/Device.h>
#include <c10/core/DispatchKeySet.h>

#include <cstdint>

namespace openreg {

// The dispatch keys of a tensor whose storage is openreg device memory.
inline constexpr c10::DispatchKeySet kOpenRegKeys(c10::DispatchKey::PrivateUse1);

// The openreg device with `index`. Does not check the index: callers that
// need it valid check it first (runtime_accessor.h).
inline c10::Device OpenRegDevice(int64_t index) {
  return c10::Device(c10::DeviceType::PrivateUse1,
                     static_cast<c10::DeviceIndex>(index));
}

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_OPENREG_DEVICE_H_
