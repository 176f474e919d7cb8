"""OPENREG_LAUNCH_BLOCKING=1: every op waits for its own work and raises where
it fails (docs/configuration.md, "Debugging asynchronous failures").

The runtime reads the variable once, at first use, so each case runs in a
fresh interpreter.
"""

import os

import pytest

from openreg_testing import run_python

DRIVER = os.environ["OPENREG_DRIVER"]

# A kernel that fails on the device (an out-of-bounds index is only found when
# the kernel runs), called from a function so the traceback shows who called it.
FAILING_KERNEL = """
import traceback
import torch

def gather_out_of_bounds(index):
    return torch.arange(3, device="openreg")[index]

index = torch.tensor([7], device="openreg")
torch.openreg.synchronize()
try:
    gather_out_of_bounds(index)
    print("op returned")
    torch.openreg.synchronize()
    print("synchronize returned")
except RuntimeError as error:
    # The innermost frame of this script ("<string>"): where the caller was.
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == "<string>"]
    print("raised in", frames[-1].name)
    print("message:", str(error))
torch.openreg.synchronize()  # reported once
assert (torch.ones(4, device="openreg") * 3).sum().item() == 12.0
print("device usable")
"""


def run_failing_kernel(launch_blocking):
    env = {} if launch_blocking is None else {"OPENREG_LAUNCH_BLOCKING": launch_blocking}
    result = run_python(FAILING_KERNEL, env=env)
    assert result.returncode == 0, result.stderr
    assert "device usable" in result.stdout, result.stdout
    return result.stdout


def test_a_failing_kernel_raises_at_its_op_with_the_callers_stack():
    out = run_failing_kernel("1")
    assert "op returned" not in out, out
    assert "raised in gather_out_of_bounds" in out, out
    assert "openreg: aten::index failed on openreg:0: index 7 is out of bounds" in out, out
    assert "because OPENREG_LAUNCH_BLOCKING=1" in out, out


@pytest.mark.skipif(DRIVER == "cpu_sim", reason="cpu_sim runs every op before returning, so it always raises at the op")
@pytest.mark.parametrize("launch_blocking", [None, "0", ""])
def test_without_it_a_failing_kernel_raises_only_at_the_next_synchronization(launch_blocking):
    out = run_failing_kernel(launch_blocking)
    assert "op returned" in out, out
    assert "raised in <module>" in out, out
    assert "index 7 is out of bounds" in out, out
    assert "Set OPENREG_LAUNCH_BLOCKING=1 to raise it at the failing op" in out, out


def test_work_that_succeeds_gives_the_same_results():
    code = """
    import torch
    torch.manual_seed(0)
    x = torch.randn(64, 64, device="openreg")
    y = (x @ x).relu().sum(dim=0)
    z = torch.empty(64, device="openreg")
    z.copy_(y)
    print(z.cpu().sum().item())
    """
    outputs = {value: run_python(code, env={"OPENREG_LAUNCH_BLOCKING": value}) for value in ("0", "1")}
    for result in outputs.values():
        assert result.returncode == 0, result.stderr
    assert outputs["0"].stdout == outputs["1"].stdout


@pytest.mark.parametrize("value", ["yes", "2", "true"])
def test_a_bad_value_is_rejected_with_what_is_expected(value):
    code = """
    import torch
    try:
        torch.ones(1, device="openreg")
    except Exception as error:
        print(type(error).__name__ + ": " + str(error).splitlines()[0])
    assert torch.ones(2).sum().item() == 2.0
    """
    result = run_python(code, env={"OPENREG_LAUNCH_BLOCKING": value})
    assert result.returncode == 0, result.stderr
    assert f"OPENREG_LAUNCH_BLOCKING='{value}' is not valid: expected 0 (off" in result.stdout
    assert "or 1 (every op waits for its own work" in result.stdout
