"""The c10d backend for openreg tensors, registered when the package loads.

`dist.init_process_group()` with no backend then picks it for openreg tensors
(and Gloo for CPU ones); so do `backend="openreg"` and
`backend="cpu:gloo,openreg:openreg"`. Each group's backend wraps a Gloo
backend of its own: docs/distributed.md explains the design.
"""

import torch.distributed as dist

from torch_openreg import _C

BACKEND_NAME = "openreg"

# Keys of the Gloo backend inside an openreg backend, kept apart from those of
# a Gloo backend the same group may have for CPU tensors.
_STORE_PREFIX = "openreg_gloo/"


def _create_backend(options, backend_options) -> "dist.Backend":
    del backend_options  # openreg takes no backend-specific options
    timeout = options.timeout
    store = dist.PrefixStore(_STORE_PREFIX, options.store)
    gloo = dist.ProcessGroupGloo(store, options.group_rank, options.group_size, timeout)
    return _C.ProcessGroupOpenReg(
        gloo, options.group_rank, options.group_size, timeout, list(options.global_ranks_in_group)
    )


def register() -> None:
    """Registers the backend with torch.distributed; idempotent."""
    if not dist.is_available() or BACKEND_NAME.upper() in dist.Backend._plugins:
        return
    _C._register_distributed()
    dist.Backend.register_backend(BACKEND_NAME, _create_backend, extended_api=True, devices=["openreg"])
