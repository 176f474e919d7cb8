#include "core/torch_runtime/guard_impl.h"

#include "core/runtime/runtime.h"
#include "core/runtime/thread_state.h"
#include "core/torch_runtime/driver_thread_width.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_capture.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {
namespace {

openreg_event AsEvent(void* event) { return static_cast<openreg_event>(event); }

// A device without an index ("openreg") means the current device, as
// torch.Stream(device="openreg") expects.
c10::DeviceIndex IndexOf(c10::Device device) {
  return device.has_index()
             ? device.index()
             : static_cast<c10::DeviceIndex>(CurrentDeviceIndex());
}

c10::Stream MakeStream(c10::DeviceIndex device, int64_t id) {
  return c10::Stream(c10::Stream::UNSAFE,
                     c10::Device(GuardImpl::kDeviceType, device), id);
}

}  // namespace

c10::Device GuardImpl::exchangeDevice(c10::Device device) const {
  const c10::Device previous = getDevice();
  if (device.index() != previous.index()) setDevice(device);
  return previous;
}

c10::Device GuardImpl::getDevice() const {
  return c10::Device(kDeviceType,
                     static_cast<c10::DeviceIndex>(CurrentDeviceIndex()));
}

void GuardImpl::setDevice(c10::Device device) const {
  TORCH_CHECK(device.type() == kDeviceType, "expected an openreg device, got ",
              device);
  CheckDeviceIndex(device.index());
  SetCurrentDeviceIndex(device.index());
}

void GuardImpl::uncheckedSetDevice(c10::Device device) const noexcept {
  // Called from guard destructors to restore a device that was valid when
  // saved, so no check is needed (and none may throw).
  SetCurrentDeviceIndex(device.index());
}

c10::DeviceIndex GuardImpl::deviceCount() const noexcept {
  absl::StatusOr<Runtime*> runtime = Runtime::Get();
  return runtime.ok() ? static_cast<c10::DeviceIndex>((*runtime)->device_count())
                      : 0;
}

c10::DeviceCapability GuardImpl::getDeviceCapability(
    c10::Device device) const {
  CheckDeviceIndex(IndexOf(device));
  // Every op runs ATen's CPU kernel on device memory, so a dtype is supported
  // when the CPU can allocate, copy and convert it, or for the quantized
  // types, quantize, dequantize and copy it (core/aten/layout_fallback.h).
  // Not listed: the sub-byte quantized types, and the bits, sub-byte integer
  // and float4 types, which the CPU cannot copy or convert.
  c10::DeviceCapability capability;
  capability.capability_data.capability_bits = 0;
  constexpr c10::ScalarTypeIndex kSupported[] = {
      c10::kIndex_Byte,
      c10::kIndex_Char,
      c10::kIndex_Short,
      c10::kIndex_Int,
      c10::kIndex_Long,
      c10::kIndex_Half,
      c10::kIndex_Float,
      c10::kIndex_Double,
      c10::kIndex_ComplexHalf,
      c10::kIndex_ComplexFloat,
      c10::kIndex_ComplexDouble,
      c10::kIndex_Bool,
      c10::kIndex_BFloat16,
      c10::kIndex_Float8_e5m2,
      c10::kIndex_Float8_e4m3fn,
      c10::kIndex_Float8_e5m2fnuz,
      c10::kIndex_Float8_e4m3fnuz,
      c10::kIndex_Float8_e8m0fnu,
      c10::kIndex_UInt16,
      c10::kIndex_UInt32,
      c10::kIndex_UInt64,
      c10::kIndex_QInt8,
      c10::kIndex_QUInt8,
      c10::kIndex_QInt32,
  };
  for (const c10::ScalarTypeIndex supported : kSupported) {
    capability.capability_data.capability_bits |= uint64_t{1} << supported;
  }
  return capability;
}

c10::Stream GuardImpl::getStream(c10::Device device) const {
  return CurrentStream(IndexOf(device));
}

c10::Stream GuardImpl::getDefaultStream(c10::Device device) const {
  const c10::DeviceIndex index = IndexOf(device);
  CheckDeviceIndex(index);
  return MakeStream(index, kDefaultStreamId);
}

c10::Stream GuardImpl::getStreamFromGlobalPool(c10::Device device,
                                               bool is_high_priority) const {
  const c10::DeviceIndex index = IndexOf(device);
  Runtime& runtime = RuntimeForDevice(index);
  const DeviceProperties properties =
      ValueOrThrow(runtime.driver().GetDeviceProperties(index));
  return getNewStream(
      c10::Device(kDeviceType, index),
      is_high_priority ? properties.greatest_stream_priority
                       : properties.least_stream_priority);
}

c10::Stream GuardImpl::getNewStream(c10::Device device, int priority) const {
  const c10::DeviceIndex index = IndexOf(device);
  Runtime& runtime = RuntimeForDevice(index);
  const int64_t id = ValueOrThrow(runtime.streams().Create(index, priority));
  return MakeStream(index, id);
}

c10::Stream GuardImpl::exchangeStream(c10::Stream stream) const {
  const c10::Stream previous = CurrentStream(stream.device_index());
  DriverStreamOf(stream);  // validates the id
  SetCurrentStreamId(stream.device_index(), stream.id());
  return previous;
}

bool GuardImpl::queryStream(const c10::Stream& stream) const {
  return QueryStream(stream.device_index(), DriverStreamOf(stream));
}

void GuardImpl::synchronizeStream(const c10::Stream& stream) const {
  SynchronizeStream(stream.device_index(), DriverStreamOf(stream));
}

void GuardImpl::synchronizeDevice(c10::DeviceIndex device_index) const {
  CheckDeviceIndex(device_index);
  SynchronizeDevice(device_index);
}

void GuardImpl::record(void** event, const c10::Stream& stream,
                       c10::DeviceIndex device_index,
                       c10::EventFlag flag) const {
  TORCH_CHECK(device_index == -1 || device_index == stream.device_index(),
              "Event device index ", static_cast<int>(device_index),
              " does not match recording stream's device index ",
              static_cast<int>(stream.device_index()), ".");
  const Driver& driver = RuntimeOrThrow().driver();
  const openreg_stream driver_stream = DriverStreamOf(stream);
  if (*event == nullptr) {
    // PyTorch's convention: BACKEND_DEFAULT events time, PYTORCH_DEFAULT
    // events do not (as cudaEventDisableTiming).
    // c10 keeps the event as a void* and hands it back to destroyEvent, so
    // ownership leaves the DriverEvent here and returns there.
    const EventFlags flags = flag == c10::EventFlag::BACKEND_DEFAULT
                                 ? EventFlags::kEnableTiming
                                 : EventFlags::kDefault;
    *event = ValueOrThrow(driver.CreateEvent(stream.device_index(), flags))
                 .release();
  }
  RecordEventOn(stream.device_index(), AsEvent(*event), driver_stream);
}

void GuardImpl::block(void* event, const c10::Stream& stream) const {
  if (event == nullptr) return;
  WaitEventOn(stream.device_index(), DriverStreamOf(stream), AsEvent(event));
}

bool GuardImpl::queryEvent(void* event) const {
  if (event == nullptr) return true;
  ForbidIfEventCaptured(AsEvent(event), "querying an event of captured work");
  return ValueOrThrow(RuntimeOrThrow().driver().EventQuery(AsEvent(event)));
}

void GuardImpl::synchronizeEvent(void* event) const {
  if (event == nullptr) return;
  ForbidIfEventCaptured(AsEvent(event),
                        "synchronizing on an event of captured work");
  ThrowIfError(WhileHostWaits([event] {
    return RuntimeOrThrow().driver().EventSynchronize(AsEvent(event));
  }));
}

double GuardImpl::elapsedTime(void* start, void* end,
                              c10::DeviceIndex /*device_index*/) const {
  TORCH_CHECK(start != nullptr && end != nullptr,
              "Both events must be recorded before calculating elapsed time.");
  return ValueOrThrow(RuntimeOrThrow().driver().EventElapsedMilliseconds(
      AsEvent(start), AsEvent(end)));
}

const GuardImpl& GetGuardImpl() {
  static const GuardImpl guard;
  return guard;
}

void GuardImpl::destroyEvent(void* event,
                             c10::DeviceIndex device_index) const noexcept {
  if (event == nullptr) return;
  absl::StatusOr<Runtime*> runtime = Runtime::Get();
  // Adopted back from record() and destroyed at once, as the DriverEvent
  // goes out of scope.
  if (runtime.ok()) {
    ForgetCapturedEvent(AsEvent(event));
    (*runtime)->driver().AdoptEvent(AsEvent(event), device_index);
  }
}

}  // namespace openreg
