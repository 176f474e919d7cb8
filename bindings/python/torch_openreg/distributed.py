"""The c10d backend for openreg tensors, registered when the package loads.

`dist.init_process_group()` with no backend then picks it, as the
accelerator's (with no backend for CPU tensors, as NCCL's on CUDA); so do
`backend="openreg"` and, with Gloo for CPU tensors,
`backend="cpu:gloo,openreg:openreg"`. Each group's backend wraps a Gloo
backend of its own: docs/distributed.md explains the design.
"""

import functools

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d

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


def _give_a_registered_default_backend(group) -> None:
    """Makes openreg's backend the default of a group whose default backend PyTorch never registered.

    A group made without a backend name (`dist.init_process_group()`, or a DeviceMesh made before any group)
    gets only the accelerator's backend, ours, yet torch 2.13 marks Gloo as its default backend unless NCCL is
    among them (pytorch/pytorch#189193 fixes this upstream). PyTorch asks for the default backend in places
    such as DistributedDataParallel's constructor, which then raised "Could not find backend type 1 for
    Process Group with name gloo". Groups whose default backend is registered are left as they are.
    """
    if not isinstance(group, dist.ProcessGroup):
        return  # GroupMember.NON_GROUP_MEMBER
    devices = group._device_types
    default_is_missing = group._get_backend_name() == dist.Backend.GLOO and torch.device("cpu") not in devices
    if default_is_missing and torch.device("openreg") in devices:
        group._set_default_backend(dist.ProcessGroup.BackendType.CUSTOM)


def _with_a_registered_default_backend(make_group):
    @functools.wraps(make_group)
    def make_group_with_a_registered_default_backend(*args, **kwargs):
        group, store = make_group(*args, **kwargs)
        _give_a_registered_default_backend(group)
        return group, store

    return make_group_with_a_registered_default_backend


def register() -> None:
    """Registers the backend with torch.distributed; idempotent."""
    if not dist.is_available() or BACKEND_NAME.upper() in dist.Backend._plugins:
        return
    _C._register_distributed()
    dist.Backend.register_backend(BACKEND_NAME, _create_backend, extended_api=True, devices=["openreg"])
    # Every group, the default one and new_group's, is made here.
    distributed_c10d._new_process_group_helper = _with_a_registered_default_backend(
        distributed_c10d._new_process_group_helper
    )
