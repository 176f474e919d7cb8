// Copies between the CPU and openreg devices, and between openreg devices.
//
// Whole-buffer copies go through the driver's memcpy (a device's DMA engine);
// anything that also converts dtype or layout runs ATen's CPU copy kernel on
// device memory in stream order. Every copy is enqueued on the current stream
// and returns without waiting, except copies into pageable host memory, which
// are synchronous as on CUDA. The memory a pending copy uses is kept alive
// until the copy has run (Note [Asynchronous execution]), unless the copy's
// stream orders it (device_memory_aliases.h).
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include <initializer_list>
#include <memory>

#include "absl/container/inlined_vector.h"
#include "core/aten/cpu_alias.h"
#include "core/aten/device_memory_aliases.h"
#include "core/aten/native_ops.h"
#include "core/runtime/runtime.h"
#include "core/torch_runtime/device_allocator.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_capture.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {
namespace {

bool IsOpenReg(const at::Tensor& tensor) {
  return tensor.device().type() == c10::DeviceType::PrivateUse1;
}

const Driver& DriverFor(c10::DeviceIndex device) {
  return RuntimeForDevice(device).driver();
}

// Whether one memcpy of numel * itemsize bytes from src's first element to
// dst's first element is the whole copy.
bool IsPlainByteCopy(const at::Tensor& src, const at::Tensor& dst) {
  return src.scalar_type() == dst.scalar_type() &&
         src.is_non_overlapping_and_dense() &&
         dst.is_non_overlapping_and_dense() && src.strides() == dst.strides() &&
         !src.is_conj() && !dst.is_conj() && !src.is_neg() && !dst.is_neg();
}

// An empty CPU tensor whose bytes mean what `like`'s bytes mean: same sizes,
// strides, dtype, and conjugate and negative bits.
at::Tensor CpuBufferLike(const at::Tensor& like) {
  at::Tensor buffer = at::empty_strided(
      like.sizes(), like.strides(),
      at::TensorOptions().dtype(like.scalar_type()).device(at::kCPU));
  buffer._set_conj(like.is_conj());
  buffer._set_neg(like.is_neg());
  return buffer;
}

// A CPU tensor laid out as dst, holding src's values.
at::Tensor CpuStagingLike(const at::Tensor& dst, const at::Tensor& src) {
  at::Tensor staging = CpuBufferLike(dst);
  staging.copy_(src);
  return staging;
}

// Keeps the storages of `tensors` that the current stream of `device` does
// not order alive until the work enqueued before on that stream has run.
void KeepAliveUntilDone(c10::DeviceIndex device,
                        std::initializer_list<at::Tensor> tensors) {
  const openreg_stream stream = CurrentDriverStream(device);
  const openreg_stream ordering = StreamOrderingWork(stream);
  absl::InlinedVector<c10::Storage, 2> storages;
  for (const at::Tensor& tensor : tensors) {
    if (!OrderedOnStream(tensor.storage(), ordering)) {
      storages.push_back(tensor.storage());
    }
  }
  if (storages.empty()) return;
  EnqueueWork(device, stream, "copy", [storages = std::move(storages)] {});
}

// Enqueues a driver memcpy of src's bytes to dst on the current stream.
void Memcpy(const at::Tensor& dst, const at::Tensor& src, CopyKind kind,
            c10::DeviceIndex device) {
  const size_t bytes = static_cast<size_t>(src.numel()) * src.itemsize();
  if (bytes == 0) return;
  EnqueueCopy(device, CurrentDriverStream(device), dst.data_ptr(),
              src.data_ptr(), bytes, kind);
}

void SynchronizeCurrentStream(c10::DeviceIndex device) {
  SynchronizeStream(device, CurrentDriverStream(device));
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
  // The driver copies pageable memory before returning; pinned memory is
  // read when the copy runs, so it is kept alive too.
  Memcpy(dst, host, CopyKind::kHostToDevice, device);
  KeepAliveUntilDone(device, {dst, host});
}

void CopyDeviceToHost(const at::Tensor& src, const at::Tensor& dst,
                      bool non_blocking) {
  const c10::DeviceIndex device = src.device().index();
  if (!src.is_non_overlapping_and_dense()) {
    CopyDeviceToHost(src.contiguous(), dst, non_blocking);
    return;
  }
  if (IsPlainByteCopy(src, dst)) {
    Memcpy(dst, src, CopyKind::kDeviceToHost, device);
    if (non_blocking && dst.is_pinned()) {
      KeepAliveUntilDone(device, {src, dst});
    } else {
      SynchronizeCurrentStream(device);
    }
    return;
  }
  at::Tensor staging = CpuBufferLike(src);
  Memcpy(staging, src, CopyKind::kDeviceToHost, device);
  SynchronizeCurrentStream(device);
  dst.copy_(staging);
}

// Copies on the current stream of dst's device.
void CopyOnDestinationStream(const at::Tensor& src, const at::Tensor& dst) {
  const c10::DeviceIndex device = dst.device().index();
  if (IsPlainByteCopy(src, dst)) {
    Memcpy(dst, src, CopyKind::kDeviceToDevice, device);
    KeepAliveUntilDone(device, {src, dst});
    return;
  }
  const openreg_stream stream = CurrentDriverStream(device);
  auto aliases = std::make_shared<CpuAliases>(
      DeviceMemoryAliases(stream, CpuAliases::Originals::kHeld));
  at::Tensor dst_alias = aliases->Alias(dst);
  at::Tensor src_alias = aliases->Alias(src);
  // The copy needs the memory, not the openreg tensors (whose Python objects
  // would otherwise outlive the user's last reference until the copy ran).
  aliases->ForgetOriginalTensors();
  EnqueueWork(device, stream, "aten::copy_",
              [aliases, dst_alias, src_alias]() mutable {
                dst_alias.copy_(src_alias);
              });
}

// Makes `waiter` wait for the work enqueued so far on `signaller`; returns
// the event, shared because it must outlive the wait on both streams.
std::shared_ptr<DriverEvent> MakeWait(c10::DeviceIndex signaller_device,
                                      openreg_stream signaller,
                                      c10::DeviceIndex waiter_device,
                                      openreg_stream waiter) {
  const Driver& driver = DriverFor(signaller_device);
  auto event = std::make_shared<DriverEvent>(
      ValueOrThrow(driver.CreateEvent(signaller_device, EventFlags::kDefault)));
  RecordEventOn(signaller_device, event->get(), signaller);
  WaitEventOn(waiter_device, waiter, event->get());
  return event;
}

void CopyDeviceToDevice(const at::Tensor& src, const at::Tensor& dst) {
  const c10::DeviceIndex dst_device = dst.device().index();
  const c10::DeviceIndex src_device = src.device().index();
  const c10::DeviceGuard guard(dst.device());
  if (src_device == dst_device) {
    CopyOnDestinationStream(src, dst);
    return;
  }
  // Across devices, the copy runs on the destination's stream after the
  // source's pending work, and the source's later work waits for the copy.
  const openreg_stream src_stream = CurrentDriverStream(src_device);
  const openreg_stream dst_stream = CurrentDriverStream(dst_device);
  std::shared_ptr<DriverEvent> source_ready =
      MakeWait(src_device, src_stream, dst_device, dst_stream);
  CopyOnDestinationStream(src, dst);
  std::shared_ptr<DriverEvent> copy_done =
      MakeWait(dst_device, dst_stream, src_device, src_stream);
  // Each event lives until both streams are past their waits on it.
  EnqueueWork(dst_device, dst_stream, "copy",
              [source_ready, copy_done] {});
  EnqueueWork(src_device, src_stream, "copy",
              [source_ready, copy_done] {});
}

}  // namespace

at::Tensor CopyFrom(const at::Tensor& source, const at::Tensor& dst,
                    bool non_blocking) {
  // copy_ broadcasts the source to the destination's shape (linalg's
  // matrix_power(A, 0) copies one identity matrix into a batch).
  TORCH_CHECK(at::is_expandable_to(source.sizes(), dst.sizes()),
              "copy: expected a source that broadcasts to the destination's "
              "shape ",
              dst.sizes(), ", got one of shape ", source.sizes());
  const at::Tensor self = source.expand(dst.sizes());
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
