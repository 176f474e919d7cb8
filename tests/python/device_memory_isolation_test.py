"""Device memory the host cannot touch (docs/memory.md): dereferencing an
openreg tensor's data_ptr() on the host faults, as on hardware, while
everything that reaches device memory the proper way keeps working."""

import signal

import torch

from openreg_testing import assert_same, run_python

DEREFERENCE = """
import ctypes
import torch
x = torch.full((4,), 6.0, device="openreg")
torch.openreg.synchronize()
print("dereferencing", flush=True)
print(ctypes.c_float.from_address(x.data_ptr()).value, flush=True)
"""


def test_host_dereference_of_a_device_pointer_faults():
    result = run_python(DEREFERENCE)
    assert "dereferencing" in result.stdout, result.stderr
    assert "6.0" not in result.stdout
    assert result.returncode == -signal.SIGSEGV, (result.returncode, result.stderr)


def test_pinned_host_memory_stays_host_accessible():
    import ctypes

    pinned = torch.full((4,), 3.0).pin_memory()
    assert ctypes.c_float.from_address(pinned.data_ptr()).value == 3.0


def test_kernels_copies_and_views_see_the_values():
    cpu = torch.arange(24.0).view(4, 6)
    x = cpu.to("openreg")
    assert_same(x * 2 + 1, cpu * 2 + 1)
    assert_same(x.t().contiguous(), cpu.t().contiguous())
    assert_same(x[1:, ::2].sum(dim=0), cpu[1:, ::2].sum(dim=0))
    # A dtype-converting device-to-device copy runs a CPU kernel on aliases.
    assert_same(x.to(torch.float64), cpu.to(torch.float64))
    x.add_(1)
    cpu.add_(1)
    assert_same(x, cpu)


def test_results_the_kernel_allocates_are_adopted_at_their_device_address():
    # Data-dependent shapes: the kernel allocates its results in device memory
    # (at their execution address) and the core adopts them.
    cpu = torch.tensor([0.0, 3.0, 0.0, 5.0, 3.0])
    x = cpu.to("openreg")
    assert_same(torch.nonzero(x), torch.nonzero(cpu))
    assert_same(torch.unique(x), torch.unique(cpu))
    assert_same(x[x > 1], cpu[cpu > 1])


def test_copies_across_devices_and_through_pinned_memory():
    source = torch.randn(1000).pin_memory()
    on_0 = source.to("openreg:0", non_blocking=True)
    on_1 = on_0.to("openreg:1")
    back = torch.empty_like(source).pin_memory()
    back.copy_(on_1, non_blocking=True)
    torch.openreg.synchronize(1)
    assert torch.equal(back, source)
    assert_same(on_1.to("openreg:0", dtype=torch.float16), source.to(torch.float16))
