"""Runs a registration right after a given module has been imported.

openreg registers itself with Dynamo and Inductor (torch_openreg._inductor),
but `import torch` loads this package and must stay cheap, while importing
Dynamo or Inductor takes seconds. So the registrations wait for the modules
they extend: a finder on sys.meta_path notices the import of a watched
module and runs its registration as soon as that module has executed, before
anyone can use it.
"""

import importlib.abc
import importlib.machinery
import sys
import threading
import warnings
from typing import Callable, Dict


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    def __init__(self, registrations: Dict[str, Callable[[], None]]):
        self._registrations = dict(registrations)
        self._lock = threading.Lock()

    def find_spec(self, name, path, target=None):
        with self._lock:
            register = self._registrations.pop(name, None)
        if register is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            # torch's modules are plain files; anything else (a frozen or
            # zipped torch) is left to the other finders, unextended.
            warnings.warn(
                f"openreg could not hook the import of {name}, so torch.compile does not know the "
                "openreg device; import torch_openreg._inductor and call its register functions "
                "after importing it"
            )
            return None
        loader = spec.loader
        execute = loader.exec_module

        def exec_module_then_register(module):
            execute(module)
            register()
            # Not in find_spec: the import system is iterating over
            # sys.meta_path there, and removing an entry would skip the next.
            with self._lock:
                if not self._registrations:
                    _remove_finder(self)

        loader.exec_module = exec_module_then_register
        return spec


def _remove_finder(finder: importlib.abc.MetaPathFinder) -> None:
    try:
        sys.meta_path.remove(finder)
    except ValueError:
        pass


def register_after_import(registrations: Dict[str, Callable[[], None]]) -> None:
    """For each module name, runs its registration once that module is imported
    (at once when it already is)."""
    pending = {}
    for name, register in registrations.items():
        if name in sys.modules:
            register()
        else:
            pending[name] = register
    if pending:
        sys.meta_path.insert(0, _RegisterAfterImport(pending))
