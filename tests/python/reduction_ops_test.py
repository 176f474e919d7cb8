"""sum, mean and linalg_vector_norm over dimensions on openreg (core/aten/reduction_ops.cc): ATen's
meta function at the call and its CPU implementation on the stream, or the CPU
fallback for the calls that path leaves to it, give the CPU's results, dtypes
and errors, functional and out=, on every layout."""

import functools
import math

import pytest
import torch

from openreg_testing import CountingMeta, assert_same, same_result_or_error, seeded_tensor

same_bits_or_error = functools.partial(same_result_or_error, tolerances=lambda dtype: {"rtol": 0, "atol": 0})

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


# linalg_vector_norm: the norm gradient clipping takes. Its CPU implementation runs on the stream as it runs on
# the CPU, so its bits are the CPU's, including a norm over dimensions of size 1 (which it computes as abs, or as
# ne for the zero "norm") and a complex infinity norm (which takes abs first).
NORM_ORDERS = [2, 1, 3.5, 0, math.inf, -math.inf]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.float16, torch.int64],
                         ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [(1,), (0, 2), (2,), None], ids=str)
@pytest.mark.parametrize("order", NORM_ORDERS, ids=str)
def test_vector_norm_gives_the_cpus_bits(order, dim, keepdim, dtype):
    # The last dimension has size 1.
    tensor = seeded_tensor(dtype, (3, 4, 1))
    same_bits_or_error(lambda t: torch.linalg.vector_norm(t, order, dim, keepdim), tensor)
    same_bits_or_error(lambda t: torch.linalg.vector_norm(t.transpose(0, 1), order, dim, keepdim), tensor)
    same_bits_or_error(lambda t: torch.linalg.vector_norm(t, order, dim, keepdim, dtype=torch.float64), tensor)
    same_bits_or_error(lambda t: torch.linalg.vector_norm(t, order, dim, keepdim,
                                                          out=torch.empty(0, dtype=t.dtype, device=t.device)),
                       tensor)


def test_vector_norm_takes_the_structured_path_and_leaves_the_rest_to_the_fallback():
    counting = CountingMeta()
    # The fallback sizes its results with the op's Meta kernel; the structured path calls ATen's C++ meta function.
    counting.replace("linalg_vector_norm", lambda t, ord=2, dim=None, keepdim=False, *, dtype=None: torch.empty(
        (), dtype=torch.float32, device="meta"))
    counting.replace("linalg_vector_norm.out", lambda t, ord=2, dim=None, keepdim=False, *, dtype=None, out:
                     out.resize_(()))
    try:
        # A shape no other test uses, so no cached meta result hides a call.
        x = seeded_tensor(torch.float32, (13, 2)).openreg()
        torch.linalg.vector_norm(x)
        torch.linalg.vector_norm(x, 1, out=torch.empty(0, device="openreg"))
        torch.openreg.synchronize()
        assert counting.calls == []
        # An integer tensor: ATen's error, from the fallback.
        with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input"):
            torch.linalg.vector_norm(seeded_tensor(torch.int64, (13, 2)).openreg())
            torch.openreg.synchronize()
        assert counting.calls == ["linalg_vector_norm"]
    finally:
        counting.library._destroy()


def test_vector_norm_errors_at_the_call_and_gradients():
    x = seeded_tensor(torch.float32, (4, 5)).openreg()
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        torch.linalg.vector_norm(x, 2, (2,))
    with pytest.raises(RuntimeError, match="linalg.vector_norm: dtype should be floating point or complex"):
        torch.linalg.vector_norm(x, dtype=torch.int64)
    cpu_leaf = x.cpu().requires_grad_()
    leaf = x.detach().requires_grad_()
    torch.linalg.vector_norm(cpu_leaf, 3.0, (1,)).sum().backward()
    torch.linalg.vector_norm(leaf, 3.0, (1,)).sum().backward()
    assert_same(leaf.grad, cpu_leaf.grad, rtol=0, atol=0)
