#include "core/torch_runtime/torch_stream.h"

#include "absl/base/attributes.h"
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
  // Every op asks this; the registry's lookup takes its mutex. A handle never
  // changes once made and the runtime lives as long as the process
  // (stream_registry.h), so each thread remembers its last answer.
  // RuntimeForDevice still runs first: it checks the index and raises in a
  // forked child, where the remembered handle is not to be used.
  struct Lookup {
    const Runtime* runtime = nullptr;
    c10::DeviceIndex device = -1;
    int64_t id = -1;
    openreg_stream handle = nullptr;
  };
  // Note [Thread-locals on the launch path] (core/runtime/thread_state.h).
  Lookup& last = *[]() ABSL_ATTRIBUTE_NOINLINE {
    thread_local Lookup last_on_this_thread;
    return &last_on_this_thread;
  }();
  Runtime& runtime = RuntimeForDevice(device);
  const int64_t id = CurrentStreamId(device);
  if (last.runtime != &runtime || last.device != device || last.id != id) {
    last = {&runtime, device, id,
            ValueOrThrow(runtime.streams().Get(device, id))};
  }
  runtime.MarkDeviceUsed(device);
  return last.handle;
}

}  // namespace openreg
