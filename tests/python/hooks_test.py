"""openreg's PrivateUse1HooksInterface, reached through PyTorch's hooks registry."""

import pytest
import torch
from torch_openreg import _C

from openreg_testing import run_python


def test_device_count_and_current_device_through_the_accelerator_hooks():
    assert torch._C._accelerator_hooks_device_count() == 2
    assert torch._C._accelerator_hooks_get_current_device() == 0
    assert torch._C._accelerator_hooks_exchange_device(1) == 0
    assert torch._C._accelerator_hooks_maybe_exchange_device(-1) == 1  # -1: report, change nothing
    torch._C._accelerator_hooks_set_current_device(0)
    assert torch.openreg.current_device() == 0


def test_device_from_pointer():
    x = torch.empty(100, device="openreg:1")
    assert _C._hooks_device_from_pointer(x.data_ptr()) == torch.device("openreg:1")
    assert _C._hooks_device_from_pointer(x[50:].data_ptr()) == torch.device("openreg:1")
    with pytest.raises(RuntimeError, match="is not openreg device memory"):
        _C._hooks_device_from_pointer(torch.empty(4).data_ptr())


def test_pinned_pointer_check():
    pinned = torch.empty(64).pin_memory()
    assert _C._hooks_is_pinned_pointer(pinned.data_ptr())
    assert _C._hooks_is_pinned_pointer(pinned[10:].data_ptr())
    assert not _C._hooks_is_pinned_pointer(torch.empty(64).data_ptr())
    assert not _C._hooks_is_pinned_pointer(torch.empty(4, device="openreg").data_ptr())


def test_primary_context_exists_after_first_use_of_a_device():
    result = run_python(
        """
        import torch
        from torch_openreg import _C
        print(_C._hooks_has_primary_context(0), _C._hooks_has_primary_context(1))
        torch.ones(1, device="openreg:1").sum().item()
        print(_C._hooks_has_primary_context(0), _C._hooks_has_primary_context(1), _C._hooks_has_primary_context(7))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False", "False", "True", "False"]


def test_hooks_generators_are_the_device_generators():
    generator = torch.Generator(device="openreg:1")
    assert generator.device == torch.device("openreg:1")
    assert torch.openreg.get_rng_state(1).numel() == generator.get_state().numel()
