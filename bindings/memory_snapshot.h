// The Python face of the caching allocator's memory history and snapshots
// (Note [Memory history]): torch_openreg._C._record_memory_history and
// _memory_snapshot, in torch.cuda.memory's format.
#ifndef OPENREG_BINDINGS_MEMORY_SNAPSHOT_H_
#define OPENREG_BINDINGS_MEMORY_SNAPSHOT_H_

#include <torch/csrc/utils/pybind.h>

namespace openreg {

void RegisterMemorySnapshotBindings(pybind11::module& module);

}  // namespace openreg

#endif  // OPENREG_BINDINGS_MEMORY_SNAPSHOT_H_
