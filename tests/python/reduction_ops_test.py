"""sum and mean over dimensions on openreg (core/aten/reduction_ops.cc): ATen's
meta function at the call and its CPU implementation on the stream, or the CPU
fallback for the calls that path leaves to it, give the CPU's results, dtypes
and errors, functional and out=, on every layout."""

import pytest
import torch

from openreg_testing import assert_same, seeded_tensor

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
          torch.bool]


def same_as_cpu(function, tensor, *arguments, **keywords):
    """`function` on openreg gives the CPU's result or raises its error (at
    the latest by the next synchronization, where the fallback raises)."""
    try:
        cpu = function(tensor, *arguments, **keywords)
    except RuntimeError as cpu_error:
        with pytest.raises(RuntimeError) as device_error:
            function(tensor.openreg(), *arguments, **keywords)
            torch.openreg.synchronize()
        assert str(cpu_error).split("\n")[0] in str(device_error.value)
        return
    device = function(tensor.openreg(), *arguments, **keywords)
    assert device.dtype == cpu.dtype
    assert device.shape == cpu.shape
    reduced = cpu.dtype in (torch.float16, torch.bfloat16)
    assert_same(device, cpu, **({"atol": 1e-2, "rtol": 1e-2} if reduced else {}))


DIMS = [(0,), (1,), (-1,), (0, 2), (), None]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("op", [torch.sum, torch.mean], ids=["sum", "mean"])
def test_functional(op, dim, keepdim, dtype):
    same_as_cpu(lambda t: op(t, dim, keepdim=keepdim), seeded_tensor(dtype, (3, 4, 5)))


@pytest.mark.parametrize("op", [torch.sum, torch.mean], ids=["sum", "mean"])
def test_dtype_argument(op):
    for source, target in [(torch.float32, torch.float64), (torch.float16, torch.float32),
                           (torch.float64, torch.float32), (torch.float32, torch.int64)]:
        same_as_cpu(lambda t: op(t, (1,), dtype=target), seeded_tensor(source, (3, 4)))


@pytest.mark.parametrize("op", [torch.sum, torch.mean], ids=["sum", "mean"])
@pytest.mark.parametrize("out_shape", ["empty", "sized"])
def test_out_resizes_and_returns_out(op, out_shape):
    def with_out(tensor):
        reference = op(tensor, (0,))
        out = torch.empty(0 if out_shape == "empty" else reference.shape, device=tensor.device)
        assert op(tensor, (0,), out=out) is out
        return out

    same_as_cpu(with_out, seeded_tensor(torch.float32, (6, 3)))
    # An out= tensor of another dtype: the CPU's error.
    same_as_cpu(lambda t: op(t, (0,), out=torch.empty(3, dtype=torch.float64, device=t.device)),
                seeded_tensor(torch.float32, (6, 3)))


def test_views_and_non_contiguous_inputs():
    x = seeded_tensor(torch.float32, (6, 8, 5))
    for view in [lambda t: t.transpose(0, 2), lambda t: t[::2, 1::3], lambda t: t[:, :1].expand(6, 4, 5),
                 lambda t: t.permute(2, 0, 1)[1:]]:
        same_as_cpu(lambda t: torch.sum(view(t), (0, 1)), x)
        same_as_cpu(lambda t: torch.mean(view(t), -1, keepdim=True), x)
    same_as_cpu(torch.sum, seeded_tensor(torch.float32, (0, 4)), (0,))
    same_as_cpu(torch.mean, seeded_tensor(torch.float32, (0, 4)), (1,))
    same_as_cpu(torch.sum, seeded_tensor(torch.float32, ()), ())


def test_errors_come_at_the_call():
    x = torch.ones(2, 3, device="openreg")
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        torch.sum(x, 2)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        torch.mean(x, (1, -1))
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        torch.mean(torch.ones(3, dtype=torch.int64, device="openreg"), (0,))
        torch.openreg.synchronize()
    assert_same(torch.sum(x, 1), torch.full((2,), 3.0))


def test_operands_stay_alive_and_streams_are_ordered():
    sums = [torch.sum(torch.full((64, 64), float(i), device="openreg"), 0) for i in range(20)]
    stream = torch.openreg.Stream()
    a = torch.ones(256, 256, device="openreg")
    stream.wait_stream(torch.openreg.current_stream())
    with torch.openreg.stream(stream):
        for _ in range(5):
            a = a + torch.mean(a, 0, keepdim=True)
        total = torch.sum(a, (0, 1))
    torch.openreg.current_stream().wait_stream(stream)
    for i, result in enumerate(sums):
        assert_same(result, torch.full((64,), 64.0 * i))
    assert_same(total, torch.tensor(256.0 * 256 * 32))
