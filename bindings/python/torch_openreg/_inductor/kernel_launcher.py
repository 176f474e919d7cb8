"""Compiles Inductor's C++ kernels for openreg and launches them on streams.

Inductor's CPU code generator writes each kernel as
`extern "C" void kernel(<typed parameters>)` and would call it from Python on
the calling thread. For openreg the kernel must instead run on the current
stream, on the driver's thread (Note [Launching compiled kernels] in
core/compile/compiled_kernel_launch.h). So each kernel is compiled with one
more generated function, `openreg_kernel_entry`, that takes all arguments as
an array of 8-byte slots; the core enqueues a host function that calls it.
"""

import ctypes
from typing import Any, Callable, List, Sequence

from torch._inductor.async_compile import AsyncCompile, get_compile_threads
from torch._inductor.codecache import CppCodeCache, LambdaFuture, _get_cpp_prefix_header

from torch_openreg import _C

ENTRY_NAME = "openreg_kernel_entry"

# The slot layout core/compile/compiled_kernel_launch.h defines as
# OpenRegKernelArgument; both must stay the same.
_SLOT_UNION = "union OpenRegKernelArgument { void* pointer; int64_t integer; double floating; };"

_INTEGER_TYPES = {"int64_t", "long", "int32_t", "int", "uint64_t", "uintptr_t", "bool"}
_FLOATING_TYPES = {"float", "double"}


def _slot_of(position: int, argtype: str) -> tuple:
    """(signature character, C++ expression reading slot `position` as `argtype`)."""
    bare = argtype.replace("const ", "").strip()
    if bare.endswith("*"):
        # A const pointer is only read: it may be a CPU scalar's copy.
        kind = "P" if argtype.strip().startswith("const ") else "M"
        return kind, f"static_cast<{argtype}>(args[{position}].pointer)"
    if bare in _INTEGER_TYPES:
        return "I", f"static_cast<{bare}>(args[{position}].integer)"
    if bare in _FLOATING_TYPES:
        return "F", f"static_cast<{bare}>(args[{position}].floating)"
    raise NotImplementedError(
        f"openreg cannot launch a C++ kernel with a parameter of type '{argtype}' "
        f"(parameter {position}); supported are pointers, integers and floating-point numbers"
    )


def entry_point_source(argtypes: Sequence[str]) -> tuple:
    """(signature, C++ source of openreg_kernel_entry) for a kernel with `argtypes`."""
    slots = [_slot_of(position, argtype) for position, argtype in enumerate(argtypes)]
    signature = "".join(kind for kind, _ in slots)
    call = ", ".join(expression for _, expression in slots)
    source = (
        "\n// openreg's uniform entry point (Note [Launching compiled kernels]).\n"
        f"{_SLOT_UNION}\n"
        f'extern "C" void {ENTRY_NAME}(const OpenRegKernelArgument* args) {{ kernel({call}); }}\n'
    )
    return signature, source


class _KernelCodeCache(CppCodeCache):
    """Inductor's C++ code cache for openreg kernels: the same compiler flags as
    its Python-binding kernels (no libtorch, a shared library, the precompiled
    kernel prefix header), loaded with ctypes instead of as a Python module."""

    cache: dict = {}
    cpp_compile_command_flags = {"include_pytorch": False, "shared": True}

    @classmethod
    def _get_uncompiled_header(cls, device: str):
        return _get_cpp_prefix_header(device)


class OpenRegCompiledKernel(_C._CompiledKernel):
    """A compiled kernel; calling it launches it on the current openreg stream
    of its tensors' device and returns at once.

    The call goes straight to the core (`_C._CompiledKernel.__call__`): the
    entry point, name and signature were handed over once, here, so a launch
    converts only its arguments (Note [Launching compiled kernels])."""

    def __init__(self, name: str, signature: str, library: ctypes.CDLL):
        super().__init__(ctypes.cast(getattr(library, ENTRY_NAME), ctypes.c_void_p).value or 0, name, signature)
        # Keeps the library loaded for as long as the kernel can be called.
        self._library = library

    def __repr__(self) -> str:
        return f"<openreg compiled kernel {self.name}({self.signature})>"


class OpenRegKernelCompiler:
    """What the generated wrapper calls instead of `async_compile.cpp_pybinding`."""

    def __init__(self, async_compile: AsyncCompile):
        self._async_compile = async_compile

    def compile(self, name: str, argtypes: List[str], source: str) -> Any:
        signature, entry = entry_point_source(argtypes)
        # The host's C++ compiler builds it for the host: the kernel runs on
        # the host, on the driver's thread.
        if get_compile_threads() <= 1:
            return OpenRegCompiledKernel(name, signature, _KernelCodeCache.load(source + entry, "cpu"))
        get_library: Callable[[], ctypes.CDLL] = _KernelCodeCache.load_async(
            source + entry, "cpu", submit_fn=self._async_compile.submit
        )
        return LambdaFuture(lambda: OpenRegCompiledKernel(name, signature, get_library()))
