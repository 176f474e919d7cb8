"""Inductor's Python wrapper code generation for openreg.

The wrapper is Inductor's own, with two changes for openreg:
- a C++ kernel is compiled by OpenRegKernelCompiler (kernel_launcher.py)
  instead of `async_compile.cpp_pybinding`, so calling it launches it on the
  current openreg stream instead of running it on the calling thread;
- buffers are allocated on the graph's device index, not the current device,
  through `_C._empty_strided` (Inductor's generic path parses arguments and a
  device string per buffer).
Everything else (extern kernels such as mm and convolution, fallbacks to
ATen ops, reinterpret views) is ordinary eager openreg work, enqueued on the
same stream in program order.
"""

from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen

from torch_openreg._inductor.scheduling import OPENREG_KERNEL_MARK

_PYBINDING_CALL = "async_compile.cpp_pybinding("


def _tracks_memory_lifecycle() -> bool:
    """Whether Inductor's test configuration wants every allocation through its tracker."""
    from torch._inductor import config

    return config.test_configs.track_memory_lifecycle


class _OpenRegKernelCalls:
    """The overrides shared by the graph's wrapper and its subgraphs' wrappers."""

    def define_kernel(self, kernel_name, kernel_body, metadata=None, gpu=True, cpp_definition=None):
        # A graph on openreg may also hold CPU kernels (for CPU scalars such
        # as an optimizer's step counts); those stay Inductor's.
        if not gpu and kernel_body.startswith(_PYBINDING_CALL) and OPENREG_KERNEL_MARK in kernel_body:
            kernel_body = f"openreg_kernels.compile({kernel_name!r}, " + kernel_body[len(_PYBINDING_CALL):]
        super().define_kernel(kernel_name, kernel_body, metadata, gpu, cpp_definition)

    def make_allocation(self, name, device, dtype, shape, stride, allocation_shape=None, is_pinned=False):
        # Inductor's fast allocation path (`empty_strided_cuda` and the like)
        # exists for its own devices only; openreg's is `_C._empty_strided`,
        # on the graph's device index.
        if device.type == "openreg" and device.index is not None and not _tracks_memory_lifecycle():
            sizes = self.codegen_python_shape_tuple(shape if allocation_shape is None else allocation_shape)
            strides = self.codegen_python_shape_tuple(stride)
            return f"{name} = empty_strided_openreg({sizes}, {strides}, {dtype}, {device.index})"
        return super().make_allocation(name, device, dtype, shape, stride, allocation_shape, is_pinned)


class OpenRegSubgraphPythonWrapperCodegen(_OpenRegKernelCalls, SubgraphPythonWrapperCodegen):
    pass


class OpenRegPythonWrapperCodegen(_OpenRegKernelCalls, PythonWrapperCodegen):
    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        if is_subgraph:
            return OpenRegSubgraphPythonWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return OpenRegPythonWrapperCodegen()

    def write_header(self) -> None:
        super().write_header()
        self.header.splice(
            """
            from torch_openreg._C import _empty_strided as empty_strided_openreg
            from torch_openreg._inductor.kernel_launcher import OpenRegKernelCompiler
            openreg_kernels = OpenRegKernelCompiler(async_compile)
            """,
            strip=True,
        )
