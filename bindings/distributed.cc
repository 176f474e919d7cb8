#include "bindings/distributed.h"

#include <pybind11/chrono.h>

#include <chrono>
#include <vector>

#include "core/distributed/process_group_openreg.h"

namespace openreg {

namespace py = pybind11;

void RegisterDistributedBindings(py::module& module) {
  if (py::hasattr(module, "ProcessGroupOpenReg")) return;
  py::module::import("torch._C._distributed_c10d");
  py::class_<ProcessGroupOpenReg, c10d::Backend,
             c10::intrusive_ptr<ProcessGroupOpenReg>>(module,
                                                      "ProcessGroupOpenReg")
      .def(py::init([](const py::object& gloo, int rank, int size,
                       std::chrono::milliseconds timeout,
                       std::vector<int64_t> global_ranks) {
             // Taken by raw pointer and a new reference: torch's pybind11
             // holder for its backends is not c10::intrusive_ptr itself.
             auto* gloo_backend = gloo.cast<c10d::Backend*>();
             return c10::make_intrusive<ProcessGroupOpenReg>(
                 c10::intrusive_ptr<c10d::Backend>::reclaim_copy(gloo_backend),
                 rank, size, timeout, std::move(global_ranks));
           }),
           py::arg("gloo"), py::arg("rank"), py::arg("size"),
           py::arg("timeout"), py::arg("global_ranks"));
}

}  // namespace openreg
