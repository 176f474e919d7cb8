#include "core/aten/device_memory_aliases.h"

#include "core/torch_runtime/device_allocator.h"
#include "core/torch_runtime/runtime_accessor.h"

namespace openreg {

CpuAliases DeviceMemoryAliases(openreg_stream stream,
                               CpuAliases::Originals originals) {
  return CpuAliases(RuntimeOrThrow().execution_offsets(), originals,
                    {StreamOrderingWork(stream), &OrderedOnStream});
}

}  // namespace openreg
