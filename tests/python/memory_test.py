"""Device memory capacity is enforced with an actionable error, and the process
keeps allocating afterwards."""

import pytest
import torch

from openreg_testing import run_python


def test_allocation_past_capacity_raises_out_of_memory_and_recovers():
    result = run_python(
        """
        import torch
        keep = torch.empty(40 * 2**20, dtype=torch.uint8, device="openreg")
        try:
            torch.empty(30 * 2**20, dtype=torch.uint8, device="openreg")
        except torch.OutOfMemoryError as error:
            print("OOM:", str(error).splitlines()[0])
        again = torch.ones(10 * 2**20 // 4, dtype=torch.float32, device="openreg")
        print("after:", int(again.sum().item()))
        del keep
        big = torch.zeros(50 * 2**20, dtype=torch.uint8, device="openreg")
        print("freed:", big.numel())
        """,
        env={"OPENREG_DEVICE_MEMORY": "64MiB"},
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "OOM: openreg out of memory on device openreg:0" in out
    assert f"tried to allocate 30.00 MiB ({30 * 2**20} bytes)" in out
    assert f"capacity of 64.00 MiB ({64 * 2**20} bytes)" in out
    assert "OPENREG_DEVICE_MEMORY" in out
    assert f"after: {10 * 2**20 // 4}" in out
    assert f"freed: {50 * 2**20}" in out


@pytest.mark.parametrize("op", ["sum", "prod"])
def test_kernel_allocations_are_device_memory(op):
    # Kernels run on the stream allocate their scratch in device memory, both
    # the structured implementations (sum, core/aten/structured_calls.h) and
    # the fallback's kernels (prod): reducing uint8 makes ATen's CPU kernel
    # materialise an int64 copy of the input, which here must come from, and
    # not fit in, the device.
    result = run_python(
        f"""
        import torch
        x = torch.ones(4 * 2**20, dtype=torch.uint8, device="openreg")
        try:
            x.{op}().item()  # .item() synchronizes: the failure surfaces here at the latest
        except torch.OutOfMemoryError as error:
            print("scratch:", str(error).split(";")[0])
        y = x[: 2**20].float()  # a fresh 4 MiB result fits
        print("result:", y.device, int(y.sum().item()))
        """,
        env={"OPENREG_DEVICE_MEMORY": "24MiB"},
    )
    assert result.returncode == 0, result.stderr
    assert (f"scratch: openreg: aten::{op} failed on openreg:0: openreg out of memory on device openreg:0: "
            f"tried to allocate 32.00 MiB ({32 * 2**20} bytes)") in result.stdout
    assert f"result: openreg:0 {2**20}" in result.stdout


def test_each_device_has_its_own_capacity():
    result = run_python(
        """
        import torch
        a = torch.empty(48 * 2**20, dtype=torch.uint8, device="openreg:0")
        b = torch.empty(48 * 2**20, dtype=torch.uint8, device="openreg:1")
        print("ok")
        """,
        env={"OPENREG_DEVICE_MEMORY": "64MiB"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_pinned_memory():
    x = torch.randn(16)
    assert not x.is_pinned()
    pinned = x.pin_memory()
    assert pinned.is_pinned()
    assert torch.equal(pinned, x)
    on_device = pinned.to("openreg", non_blocking=True)
    back = torch.empty(16).pin_memory()
    back.copy_(on_device, non_blocking=True)
    torch.openreg.synchronize()
    assert torch.equal(back, x)


def test_zero_sized_tensors():
    empty = torch.empty(0, 3, device="openreg")
    assert empty.shape == (0, 3)
    assert empty.cpu().shape == (0, 3)
    assert (empty + 1).shape == (0, 3)
