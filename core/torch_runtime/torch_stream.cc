#include "core/torch_runtime/torch_stream.h"

#include "core/runtime/runtime.h"
#include "core/runtime/thread_state.h"
#include "core/torch_runtime/openreg_device.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/torch_status.h"

namespace openreg {

c10::Stream CurrentStream(c10::DeviceIndex device) {
  CheckDeviceIndex(device);
  return c10::Stream(c10::Stream::UNSAFE, OpenRegDevice(device),
                     CurrentStreamId(device));
}

openreg_stream DriverStreamOf(const c10::Stream& stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "expected an openreg stream, got a stream of device ",
              stream.device());
  Runtime& runtime = RuntimeForDevice(stream.device_index());
  openreg_stream handle =
      ValueOrThrow(runtime.streams().Get(stream.device_index(), stream.id()));
  runtime.MarkDeviceUsed(stream.device_index());
  return handle;
}

openreg_stream CurrentDriverStream(c10::DeviceIndex device) {
  return DriverStreamOf(CurrentStream(device));
}

}  // namespace openreg
