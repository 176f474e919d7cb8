"""openreg: a PyTorch accelerator backend on the PrivateUse1 dispatch key.

Importing this package (which `import torch` does through the `torch.backends`
entry point) loads the native core, names PrivateUse1 `openreg`, registers the
`torch.openreg` module and generates `Tensor.openreg()`, `Tensor.is_openreg`
and friends. No device is touched until one is first used.
"""

import atexit
import os


def _autoload() -> None:
    """The `torch.backends` entry point. Importing the package does the work.

    Defined before `import torch`: a script whose first import is
    `import torch_openreg` makes torch load its backends, this entry point
    among them, while this module is still half imported. Torch finds the
    function then, and the rest of the module registers the backend once
    torch is whole.
    """


import torch  # noqa: E402

from torch_openreg import _C

# The drivers bundled with the package, searched before OPENREG_DRIVER_PATH.
_C._set_driver_directory(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
# The core's background threads use PyTorch's Python autograd engine: stop
# them while the interpreter is still whole.
atexit.register(_C._stop_background_threads)


def _register_backend() -> None:
    # Idempotent: the entry point and an explicit `import torch_openreg` may
    # both get here.
    if torch._C._get_privateuse1_backend_name() != "openreg":
        torch.utils.rename_privateuse1_backend("openreg")
    if not hasattr(torch, "openreg"):
        from torch_openreg import openreg as device_module

        torch._register_device_module("openreg", device_module)
        torch.utils.generate_methods_for_privateuse1_backend(
            for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
        )


_register_backend()

from torch_openreg import distributed as _distributed  # noqa: E402

_distributed.register()


def _register_compile_support() -> None:
    # torch.compile support (torch_openreg/_inductor), registered when Dynamo
    # and Inductor are first imported so `import torch` does not pay for them.
    from torch_openreg import _inductor
    from torch_openreg._lazy_registration import register_after_import

    register_after_import(
        {
            "torch._dynamo.device_interface": _inductor.register_dynamo,
            "torch._inductor.compile_fx": _inductor.register_inductor,
        }
    )


_register_compile_support()

