#include <ATen/EmptyTensor.h>
#include <c10/core/DeviceGuard.h>

#include "core/aten/native_ops.h"
#include "core/runtime/thread_state.h"
#include "core/torch_runtime/device_allocator.h"
#include "core/torch_runtime/openreg_device.h"
#include "core/torch_runtime/runtime_accessor.h"

namespace openreg {
namespace {

// The device an allocation goes to: the requested index, or the current one.
c10::DeviceIndex TargetDevice(std::optional<at::Device> device) {
  if (device.has_value() && device->has_index()) {
    CheckDeviceIndex(device->index());
    return device->index();
  }
  const c10::DeviceIndex current =
      static_cast<c10::DeviceIndex>(CurrentDeviceIndex());
  CheckDeviceIndex(current);
  return current;
}

void CheckLayoutAndPinning(std::optional<at::Layout> layout,
                           std::optional<bool> pin_memory) {
  // Sparse layouts never get here: their own key takes them
  // (layout_fallback.h).
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided,
              "openreg supports strided and sparse (COO, CSR, CSC, BSR, BSC) "
              "tensors; got layout ",
              *layout, ". Create the tensor on the CPU for this layout.");
  TORCH_CHECK(!pin_memory.value_or(false),
              "pin_memory=True applies to CPU tensors only; an openreg tensor "
              "is already device memory.");
}

}  // namespace

at::Tensor Empty(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                 std::optional<at::Layout> layout,
                 std::optional<at::Device> device,
                 std::optional<bool> pin_memory,
                 std::optional<at::MemoryFormat> memory_format) {
  CheckLayoutAndPinning(layout, pin_memory);
  const c10::DeviceGuard guard(OpenRegDevice(TargetDevice(device)));
  return at::detail::empty_generic(
      size, &GetStorageAllocator(), kOpenRegKeys,
      c10::dtype_or_default(dtype), memory_format);
}

at::Tensor EmptyStrided(at::IntArrayRef size, at::IntArrayRef stride,
                        std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout,
                        std::optional<at::Device> device,
                        std::optional<bool> pin_memory) {
  CheckLayoutAndPinning(layout, pin_memory);
  const c10::DeviceGuard guard(OpenRegDevice(TargetDevice(device)));
  return at::detail::empty_strided_generic(size, stride, &GetStorageAllocator(),
                                           kOpenRegKeys,
                                           c10::dtype_or_default(dtype));
}

}  // namespace openreg
