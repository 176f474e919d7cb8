// Conversions between PyTorch's c10::Stream and the driver's stream handles.
#ifndef OPENREG_CORE_TORCH_RUNTIME_TORCH_STREAM_H_
#define OPENREG_CORE_TORCH_RUNTIME_TORCH_STREAM_H_

#include <c10/core/Stream.h>

#include "driver_abi/openreg_driver.h"

namespace openreg {

// The calling thread's current stream on `device` (validated).
c10::Stream CurrentStream(c10::DeviceIndex device);

// The driver handle behind `stream`; throws for a stream openreg never made.
openreg_stream DriverStreamOf(const c10::Stream& stream);

// The driver handle of the calling thread's current stream on `device`.
openreg_stream CurrentDriverStream(c10::DeviceIndex device);

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_TORCH_STREAM_H_
