// Alias tables (CpuAliases) for work enqueued on a device stream.
//
// Work on a stream must own the device memory it uses, or a free while it
// waits could hand that memory to someone else first; but memory
// stream-ordered on the work's own stream is only ever reused by later work
// on that stream, so the work need not hold it (Note [Stream-ordered reuse],
// core/runtime/memory/device_memory_pool.h). These tables hold just the
// storages the work must own: those of other streams and devices, host
// memory, graph pools, and everything while the stream captures a graph.
//
// Whatever is freed on the stream before the work is enqueued is reused by
// the next allocation on it, which may be one of the same op's outputs: a
// caller must keep its temporary inputs (contiguous copies and the like)
// alive until the work is enqueued.
#ifndef OPENREG_CORE_ATEN_DEVICE_MEMORY_ALIASES_H_
#define OPENREG_CORE_ATEN_DEVICE_MEMORY_ALIASES_H_

#include "core/aten/cpu_alias.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

// An empty alias table for work to be enqueued on `stream` of the device
// runtime's devices. Work that holds storages without aliases applies the
// same rule directly: OrderedOnStream(storage, StreamOrderingWork(stream))
// (core/torch_runtime/device_allocator.h).
CpuAliases DeviceMemoryAliases(openreg_stream stream,
                               CpuAliases::Originals originals);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_DEVICE_MEMORY_ALIASES_H_
