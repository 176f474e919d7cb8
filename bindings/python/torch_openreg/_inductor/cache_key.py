"""Puts openreg's code generator into the keys of Inductor's caches.

Inductor's FX graph cache keys a compiled graph by torch's version, the
graph and Inductor's configuration, not by the backend that generated its
wrapper. Without this, a graph compiled by an older torch_openreg (whose
wrapper may call a launch binding that has since changed) would be loaded
from the cache after an upgrade. Inductor does key graphs by the uuid of each
device's registered custom pass, so openreg registers this pass, whose uuid
hashes the sources of the code generation and the native module that runs
its output.
"""

import functools
import os

import torch
from torch._inductor.custom_graph_pass import CustomGraphModulePass, get_hash_for_files


@functools.lru_cache(maxsize=None)
def _codegen_hash() -> bytes:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    here = os.path.dirname(os.path.abspath(__file__))
    sources = sorted(os.path.join(here, name) for name in os.listdir(here) if name.endswith(".py"))
    native = [path for path in (os.path.join(package, "_C.so"),) if os.path.exists(path)]
    return get_hash_for_files(tuple(sources + native))


class OpenRegCodegenKey(CustomGraphModulePass):
    """Changes no graph: exists for its uuid (see the module docstring)."""

    def __call__(self, gm: torch.fx.GraphModule) -> None:
        return None

    def uuid(self) -> bytes:
        return _codegen_hash()
