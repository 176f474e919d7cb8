// Which openreg device an operator call runs on, from its arguments.
//
// Both fallbacks (cpu_fallback.cc for strided tensors, layout_fallback.cc for
// sparse and quantized ones) walk an op's arguments the same way: every
// openreg tensor and openreg device argument must name one device, and a CPU
// tensor is a device mix-up unless the fallback allows it (CPU scalars, and
// ops such as copies that take CPU tensors). Inline, since it runs for every
// op on the fallback's hot path; the CPU-tensor rule is a template parameter
// for the same reason.
//
// Thread-safety: plain functions over the caller's state.
#ifndef OPENREG_CORE_ATEN_ARGUMENT_DEVICES_H_
#define OPENREG_CORE_ATEN_ARGUMENT_DEVICES_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <optional>
#include <string>

#include "core/runtime/thread_state.h"

namespace openreg {

inline bool IsOpenReg(const at::Tensor& tensor) {
  return tensor.defined() &&
         tensor.device().type() == c10::DeviceType::PrivateUse1;
}

// Records `found` as the op's device in `*device`; throws if an earlier
// argument was on another openreg device.
inline void NoteOpDevice(std::optional<c10::DeviceIndex>* device,
                         c10::DeviceIndex found, const std::string& op_name) {
  if (!device->has_value()) {
    *device = found;
    return;
  }
  TORCH_CHECK(**device == found,
              "Expected all tensors to be on the same device, but found at "
              "least two devices, openreg:",
              static_cast<int>(**device), " and openreg:",
              static_cast<int>(found), " (in ", op_name,
              "). Move them to one device with .to().");
}

// Checks one argument of `op_name`: its openreg tensors and openreg device
// (a device without an index is the current one) go into `*device`; a CPU
// tensor must satisfy `cpu_tensor_allowed(tensor)`.
template <typename CpuTensorAllowed>
void CheckArgumentDevices(const c10::IValue& value, const std::string& op_name,
                          const CpuTensorAllowed& cpu_tensor_allowed,
                          std::optional<c10::DeviceIndex>* device) {
  auto check_tensor = [&](const at::Tensor& tensor) {
    if (IsOpenReg(tensor)) {
      NoteOpDevice(device, tensor.device().index(), op_name);
      return;
    }
    if (!tensor.defined() || !tensor.device().is_cpu() ||
        cpu_tensor_allowed(tensor)) {
      return;
    }
    // A nested tensor has no one shape to print.
    const std::string what =
        tensor.is_nested()
            ? std::string("nested CPU tensor")
            : c10::str("CPU tensor of shape ", tensor.sizes(),
                       tensor.layout() == c10::kStrided
                           ? std::string()
                           : c10::str(" (layout ", tensor.layout(), ")"));
    TORCH_CHECK(false,
                "Expected all tensors to be on the same device, but found a ",
                what, " in ", op_name,
                " on openreg. Move it with .to('openreg') first.");
  };
  if (value.isTensor()) {
    check_tensor(value.toTensor());
  } else if (value.isTensorList()) {
    for (const at::Tensor& tensor : value.toTensorList()) check_tensor(tensor);
  } else if (value.isOptionalTensorList()) {
    for (const std::optional<at::Tensor>& tensor :
         value.toOptionalTensorList()) {
      if (tensor.has_value()) check_tensor(*tensor);
    }
  } else if (value.isDevice() &&
             value.toDevice().type() == c10::DeviceType::PrivateUse1) {
    const c10::Device found = value.toDevice();
    NoteOpDevice(device,
                 found.has_index()
                     ? found.index()
                     : static_cast<c10::DeviceIndex>(CurrentDeviceIndex()),
                 op_name);
  }
}

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_ARGUMENT_DEVICES_H_
