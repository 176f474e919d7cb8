// A point in a stream's order, as the device caching allocator counts it
// (Note [Reuse inside work] in device_memory_pool.h).
#ifndef OPENREG_CORE_RUNTIME_MEMORY_STREAM_POINT_H_
#define OPENREG_CORE_RUNTIME_MEMORY_STREAM_POINT_H_

#include <cstdint>

#include "driver_abi/openreg_driver.h"

namespace openreg {

// Work enqueued on `stream` once a pool had counted `token` stream-ordered
// frees (DeviceMemoryPool::SettleToken()) runs after every use on that
// stream of the blocks freed on it up to then. A null stream is no point.
struct StreamPoint {
  openreg_stream stream = nullptr;
  uint64_t token = 0;
};

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_STREAM_POINT_H_
