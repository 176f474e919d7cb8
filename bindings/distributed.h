// The Python face of core/distributed: torch_openreg._C.ProcessGroupOpenReg.
#ifndef OPENREG_BINDINGS_DISTRIBUTED_H_
#define OPENREG_BINDINGS_DISTRIBUTED_H_

#include <torch/csrc/utils/pybind.h>

namespace openreg {

// Defines ProcessGroupOpenReg in `module`. Needs torch.distributed imported,
// so that pybind11 knows its base class, torch's c10d Backend.
void RegisterDistributedBindings(pybind11::module& module);

}  // namespace openreg

#endif  // OPENREG_BINDINGS_DISTRIBUTED_H_
