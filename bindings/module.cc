// torch_openreg._C: the thin glue between Python and the core. No logic
// lives here; every function forwards to the core, whose errors arrive as
// c10::Error and become Python exceptions through torch's translators.
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "bindings/distributed.h"
#include "bindings/memory_snapshot.h"
#include "core/aten/native_ops.h"
#include "core/compile/compiled_kernel_launch.h"
#include "core/graphs/openreg_graph.h"
#include "core/profiler/missing_activity_warning.h"
#include "core/runtime/runtime.h"
#include "core/torch_runtime/autograd_thread_workers.h"
#include "core/torch_runtime/backend_meta.h"
#include "core/torch_runtime/device_memory_by_address.h"
#include "core/torch_runtime/generator.h"
#include "core/torch_runtime/guard_impl.h"
#include "core/torch_runtime/host_allocator.h"
#include "core/torch_runtime/openreg_device.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {
namespace {

namespace py = pybind11;

py::dict DriverInfo() {
  Runtime& runtime = RuntimeOrThrow();
  const Driver& driver = runtime.driver();
  py::dict info;
  info["name"] = driver.name();
  info["version"] = driver.version();
  info["abi_version"] = std::to_string(driver.abi_version_major()) + "." +
                        std::to_string(driver.abi_version_minor());
  info["path"] = driver.path();
  return info;
}

py::dict DeviceProperties(int64_t device) {
  const openreg::DeviceProperties properties = ValueOrThrow(
      RuntimeForDevice(device).driver().GetDeviceProperties(device));
  py::dict result;
  result["name"] = properties.name;
  result["total_memory"] = properties.total_memory_bytes;
  result["least_stream_priority"] = properties.least_stream_priority;
  result["greatest_stream_priority"] = properties.greatest_stream_priority;
  result["concurrent_streams"] = properties.concurrent_streams;
  return result;
}

// The pinned allocator's statistics, flattened as torch.cuda's are:
// "allocated_bytes.current", "num_host_alloc", ...
py::dict HostMemoryStats() {
  const at::HostStats stats = GetHostAllocator().get_stats();
  py::dict result;
  const auto add = [&](const char* name, const c10::CachingAllocator::Stat& stat) {
    const std::string prefix = std::string(name) + ".";
    result[py::str(prefix + "current")] = stat.current;
    result[py::str(prefix + "peak")] = stat.peak;
    result[py::str(prefix + "allocated")] = stat.allocated;
    result[py::str(prefix + "freed")] = stat.freed;
  };
  add("active_requests", stats.active_requests);
  add("active_bytes", stats.active_bytes);
  add("allocations", stats.allocations);
  add("allocated_bytes", stats.allocated_bytes);
  result["num_host_alloc"] = stats.num_host_alloc;
  result["num_host_free"] = stats.num_host_free;
  return result;
}

// Launches `kernel` with a call's Python arguments: tensors (passed by
// address: the tuple holds them until the launch returns), ints and floats,
// in order (Note [Launching compiled kernels]). The values live on the
// stack; the only allocation is the launched work's.
void LaunchWithArguments(const CompiledKernel& kernel,
                         const py::args& arguments) {
  const Py_ssize_t count = PyTuple_GET_SIZE(arguments.ptr());
  absl::InlinedVector<CompiledKernelValue, 8> values;
  values.reserve(count);
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* argument = PyTuple_GET_ITEM(arguments.ptr(), i);
    if (THPVariable_Check(argument)) {
      values.emplace_back(&THPVariable_Unpack(argument));
    } else if (PyLong_Check(argument) && !PyBool_Check(argument)) {
      values.emplace_back(py::cast<int64_t>(py::handle(argument)));
    } else if (PyFloat_Check(argument)) {
      values.emplace_back(PyFloat_AS_DOUBLE(argument));
    } else {
      throw py::type_error(
          "compiled kernel " + kernel.name() + ": argument " +
          std::to_string(i) + " must be a tensor, an int or a float, got " +
          std::string(py::str(py::type::handle_of(py::handle(argument)))));
    }
  }
  py::gil_scoped_release no_gil;
  ThrowIfError(kernel.Launch(values));
}

// A stream as the (stream_id, device_index, device_type) triple torch.Stream
// is built from.
py::tuple StreamTriple(const c10::Stream& stream) {
  return py::make_tuple(stream.id(), stream.device_index(),
                        static_cast<int64_t>(stream.device_type()));
}

// The warning that the driver records no device activity, as a Python
// UserWarning: Kineto configures profilers inside torch's _prepare_profiler,
// with the GIL released and no Python warning handler installed, where a
// TORCH_WARN only reaches c10's stderr log (core/profiler/once_warning.h).
void WarnInPython(const std::string& message) {
  py::gil_scoped_acquire gil;
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) < 0) {
    // Warnings are errors here, but the exception cannot cross Kineto back
    // to the caller: it is reported as unraisable instead.
    PyErr_WriteUnraisable(nullptr);
  }
}

PYBIND11_MODULE(_C, m) {
  profiler::MissingActivityWarning().SetSink(&WarnInPython);
  m.doc() = "Native glue of the openreg PyTorch backend.";
  m.def("_set_driver_directory", &Runtime::SetPackageDriverDirectory,
        "Where the package's bundled drivers live; call before first use.");
  m.def("_is_initialized", &Runtime::IsInitialized);
  m.def("_is_current_stream_capturing", &IsCurrentStreamCapturing);
  m.def("_stop_background_threads", &StopReleasingAutogradThreadWorkers,
        py::call_guard<py::gil_scoped_release>());
  m.def("_init", [] { RuntimeOrThrow(); });
  m.def("_is_in_bad_fork", &Runtime::InBadFork);
  m.def("_driver_info", &DriverInfo);
  m.def("_device_count",
        [] { return RuntimeOrThrow().device_count(); });
  m.def("_get_device", [] { return GetGuardImpl().getDevice().index(); });
  m.def("_set_device", [](int64_t device) {
    GetGuardImpl().setDevice(OpenRegDevice(device));
  });
  // A negative index keeps the current device (maybe-exchange semantics).
  m.def("_exchange_device", [](int64_t device) -> int64_t {
    const GuardImpl& guard = GetGuardImpl();
    if (device < 0) return guard.getDevice().index();
    return guard.exchangeDevice(OpenRegDevice(device)).index();
  });
  m.def("_synchronize", [](int64_t device) {
    py::gil_scoped_release no_gil;
    GetGuardImpl().synchronizeDevice(static_cast<c10::DeviceIndex>(device));
  });
  m.def("_device_properties", &DeviceProperties);
  m.def("_host_memory_stats", &HostMemoryStats);
  m.def("_reset_peak_host_memory_stats",
        [] { GetHostAllocator().reset_peak_stats(); });
  m.def("_reset_accumulated_host_memory_stats",
        [] { GetHostAllocator().reset_accumulated_stats(); });
  RegisterMemorySnapshotBindings(m);
  // Note [Device memory by address].
  m.def("_caching_allocator_alloc",
        [](int64_t size, int64_t stream_id, int64_t device) {
          return AllocateDeviceMemoryByAddress(
              size, c10::Stream(c10::Stream::UNSAFE, OpenRegDevice(device),
                                stream_id));
        });
  m.def("_caching_allocator_delete", &FreeDeviceMemoryByAddress);
  m.def("_current_stream", [](int64_t device) {
    return StreamTriple(GetGuardImpl().getStream(OpenRegDevice(device)));
  });
  m.def("_default_stream", [](int64_t device) {
    return StreamTriple(GetGuardImpl().getDefaultStream(OpenRegDevice(device)));
  });
  m.def("_stream_priority", [](int64_t stream_id, int64_t device) {
    return ValueOrThrow(RuntimeForDevice(device).streams().Priority(
        static_cast<int32_t>(device), stream_id));
  });
  // Makes the stream current on its device and that device current, as
  // torch.cuda.set_stream does.
  m.def("_set_stream", [](int64_t stream_id, int64_t device) {
    const GuardImpl& guard = GetGuardImpl();
    guard.exchangeStream(c10::Stream(c10::Stream::UNSAFE, OpenRegDevice(device),
                                     stream_id));
    guard.setDevice(OpenRegDevice(device));
  });
  // The hooks as PyTorch's registry hands them out, so tests reach the
  // registered object and not only the class.
  m.def("_hooks_has_primary_context", [](int64_t device) {
    return at::detail::getPrivateUse1Hooks().hasPrimaryContext(
        static_cast<c10::DeviceIndex>(device));
  });
  m.def("_hooks_device_from_pointer", [](uintptr_t pointer) {
    return at::detail::getPrivateUse1Hooks().getDeviceFromPtr(
        reinterpret_cast<void*>(pointer));
  });
  m.def("_hooks_is_pinned_pointer", [](uintptr_t pointer) {
    return at::detail::getPrivateUse1Hooks().isPinnedPtr(
        reinterpret_cast<const void*>(pointer));
  });
  m.def("_set_backend_flags", [](const at::Tensor& tensor,
                                 const BackendFlags& flags) {
    ThrowIfError(SetBackendFlags(tensor, flags));
  });
  m.def("_get_backend_flags", [](const at::Tensor& tensor) {
    return ValueOrThrow(GetBackendFlags(tensor));
  });
  // Called by torch_openreg.distributed once torch.distributed is imported.
  m.def("_register_distributed", [m]() mutable { RegisterDistributedBindings(m); });
  // A kernel torch.compile generated, loaded once; calling it launches it
  // on the current stream (torch_openreg/_inductor/kernel_launcher.py).
  py::class_<CompiledKernel>(m, "_CompiledKernel")
      .def(py::init(
          [](uintptr_t entry, std::string name, std::string signature) {
            return ValueOrThrow(CompiledKernel::Create(
                reinterpret_cast<CompiledKernelEntry>(entry), std::move(name),
                std::move(signature)));
          }))
      .def("__call__", &LaunchWithArguments)
      .def_property_readonly("name", &CompiledKernel::name)
      .def_property_readonly("signature", &CompiledKernel::signature);
  // How the wrapper Inductor generates allocates an openreg graph's buffers
  // (torch_openreg/_inductor/wrapper.py): straight to the allocation, with
  // no Python argument parsing and no device string per buffer.
  m.def("_empty_strided", [](const std::vector<int64_t>& size,
                             const std::vector<int64_t>& stride,
                             py::handle dtype, int64_t device) {
    if (!THPDtype_Check(dtype.ptr())) {
      throw py::type_error("_empty_strided: dtype must be a torch.dtype, got " +
                           std::string(py::str(py::type::handle_of(dtype))));
    }
    return EmptyStrided(size, stride,
                        reinterpret_cast<THPDtype*>(dtype.ptr())->scalar_type,
                        std::nullopt, OpenRegDevice(device), std::nullopt);
  });
  m.def("_default_generator", [](int64_t device) {
    return py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(
        DefaultGenerator(static_cast<c10::DeviceIndex>(device))));
  });
}

}  // namespace
}  // namespace openreg
