// Copies between the CPU and openreg devices, and between openreg devices.
//
// Whole-buffer copies go through the driver's memcpy (a device's DMA engine);
// anything that also converts dtype or layout runs ATen's CPU copy kernel on
// device memory in stream order. Copies to pageable host memory are
// synchronous, as on CUDA.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include "core/aten/cpu_alias.h"
#include "core/aten/native_ops.h"
#include "core/aten/stream_execution.h"
#include "core/runtime/runtime.h"
#include "core/runtime/torch_status.h"
#include "core/runtime/torch_stream.h"

namespace openreg {
namespace {

bool IsOpenReg(const at::Tensor& tensor) {
  return tensor.device().type() == c10::DeviceType::PrivateUse1;
}

// Whether one memcpy of numel * itemsize bytes from src's first element to
// dst's first element is the whole copy.
bool IsPlainByteCopy(const at::Tensor& src, const at::Tensor& dst) {
  return src.scalar_type() == dst.scalar_type() &&
         src.is_non_overlapping_and_dense() &&
         dst.is_non_overlapping_and_dense() && src.strides() == dst.strides() &&
         !src.is_conj() && !dst.is_conj() && !src.is_neg() && !dst.is_neg();
}

// A CPU tensor with dst's sizes, strides and dtype, holding src's values.
at::Tensor CpuStagingLike(const at::Tensor& dst, const at::Tensor& src) {
  at::Tensor staging = at::empty_strided(
      dst.sizes(), dst.strides(),
      at::TensorOptions().dtype(dst.scalar_type()).device(at::kCPU));
  staging.copy_(src);
  return staging;
}

void Memcpy(const at::Tensor& dst, const at::Tensor& src, int32_t kind,
            c10::DeviceIndex device) {
  const size_t bytes = static_cast<size_t>(src.numel()) * src.itemsize();
  if (bytes == 0) return;
  ThrowIfError(RuntimeForDevice(device).driver().MemcpyAsync(
      dst.data_ptr(), src.data_ptr(), bytes, kind,
      CurrentDriverStream(device)));
}

void SynchronizeCurrentStream(c10::DeviceIndex device) {
  ThrowIfError(RuntimeForDevice(device).driver().StreamSynchronize(
      CurrentDriverStream(device)));
}

void CopyHostToDevice(const at::Tensor& src, const at::Tensor& dst) {
  const c10::DeviceIndex device = dst.device().index();
  if (!dst.is_non_overlapping_and_dense()) {
    // Stage through a dense device buffer, then scatter on the device.
    at::Tensor dense = at::empty(dst.sizes(), dst.options());
    CopyHostToDevice(src, dense);
    dst.copy_(dense);
    return;
  }
  const at::Tensor host = IsPlainByteCopy(src, dst) ? src : CpuStagingLike(dst, src);
  // The driver copies pageable memory before returning, so `host` may be a
  // temporary.
  Memcpy(dst, host, OPENREG_MEMCPY_HOST_TO_DEVICE, device);
}

void CopyDeviceToHost(const at::Tensor& src, const at::Tensor& dst,
                      bool non_blocking) {
  const c10::DeviceIndex device = src.device().index();
  if (!src.is_non_overlapping_and_dense()) {
    CopyDeviceToHost(src.contiguous(), dst, non_blocking);
    return;
  }
  if (IsPlainByteCopy(src, dst)) {
    Memcpy(dst, src, OPENREG_MEMCPY_DEVICE_TO_HOST, device);
    if (!non_blocking || !dst.is_pinned()) SynchronizeCurrentStream(device);
    return;
  }
  at::Tensor staging = at::empty_strided(
      src.sizes(), src.strides(),
      at::TensorOptions().dtype(src.scalar_type()).device(at::kCPU));
  Memcpy(staging, src, OPENREG_MEMCPY_DEVICE_TO_HOST, device);
  SynchronizeCurrentStream(device);
  dst.copy_(staging);
}

void CopyDeviceToDevice(const at::Tensor& src, const at::Tensor& dst) {
  const c10::DeviceIndex dst_device = dst.device().index();
  const c10::DeviceIndex src_device = src.device().index();
  if (src_device != dst_device) {
    // The source's pending work must finish before the destination's stream
    // reads it.
    SynchronizeCurrentStream(src_device);
  }
  const c10::DeviceGuard guard(dst.device());
  if (IsPlainByteCopy(src, dst)) {
    Memcpy(dst, src, OPENREG_MEMCPY_DEVICE_TO_DEVICE, dst_device);
    return;
  }
  CpuAliases aliases;
  at::Tensor dst_alias = aliases.Alias(dst);
  at::Tensor src_alias = aliases.Alias(src);
  RunOnCurrentStreamAndWait(dst_device, [&] { dst_alias.copy_(src_alias); });
}

}  // namespace

at::Tensor CopyFrom(const at::Tensor& self, const at::Tensor& dst,
                    bool non_blocking) {
  TORCH_CHECK(self.sizes() == dst.sizes(), "copy: expected source of shape ",
              dst.sizes(), " to match destination, got ", self.sizes());
  if (dst.numel() == 0) return dst;
  if (IsOpenReg(self) && IsOpenReg(dst)) {
    CopyDeviceToDevice(self, dst);
  } else if (IsOpenReg(dst)) {
    TORCH_CHECK(self.device().is_cpu(), "copy to openreg: expected a CPU or "
                "openreg source, got ", self.device());
    CopyHostToDevice(self, dst);
  } else {
    TORCH_CHECK(dst.device().is_cpu(), "copy from openreg: expected a CPU or "
                "openreg destination, got ", dst.device());
    CopyDeviceToHost(self, dst, non_blocking);
  }
  return dst;
}

at::Tensor CopyFromAndResize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return CopyFrom(self, dst, /*non_blocking=*/false);
}

at::Scalar LocalScalarDense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "a Tensor with ", self.numel(),
              " elements cannot be converted to a Python scalar");
  at::Tensor host = at::empty({}, self.options().device(at::kCPU));
  CopyDeviceToHost(self.reshape({}), host, /*non_blocking=*/false);
  return host.item();
}

}  // namespace openreg
