"""Reductions on openreg (core/aten/reduction_ops.cc): sum, mean, linalg_vector_norm, amax, amin, argmax, argmin,
max.dim, min.dim, any and all. ATen's meta function at the call and its CPU implementation on the stream, or the
CPU fallback for the calls that path leaves to it, give the CPU's results, dtypes and errors, functional and out=,
on every layout."""

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


# amax, amin, argmax, argmin, max.dim, min.dim, any and all: ATen's CPU implementations on the stream, so their
# bits are the CPU's, ties (the first index) and NaNs (which win a maximum) included. Inputs are rounded so that
# ties are common.
def rounded_tensor(dtype, shape, seed=0):
    tensor = seeded_tensor(dtype, shape, seed)
    return (tensor * 2).round().to(dtype) if dtype.is_floating_point else tensor


def with_nan(dtype, shape):
    tensor = rounded_tensor(dtype, shape)
    if dtype.is_floating_point:
        tensor.view(-1)[1::7] = float("nan")
    return tensor


def dims_of(name):
    """The dimension arguments each op is called with: a list of them, one, or none."""
    if name in ("amax", "amin"):
        return [(0,), (-1,), (0, 2), ()]
    if name in ("any", "all"):
        return [0, -1, (0, 2), (), None]
    if name in ("argmax", "argmin"):
        return [0, -1, None]
    return [0, -1]


def call_of(name):
    """`name` as a function of (tensor, dim, keepdim, out); max.values and the like give one result of max.dim."""
    op_name, _, part = name.partition(".")
    op = getattr(torch, op_name)
    if part:
        return lambda t, dim, keepdim: getattr(op(t, dim, keepdim), part)
    if op_name in ("any", "all"):
        return lambda t, dim, keepdim, **out: op(t, **out) if dim is None else op(t, dim, keepdim, **out)
    return lambda t, dim, keepdim, **out: op(t, dim, keepdim, **out)


EXTREMA = ["amax", "amin", "argmax", "argmin", "max.values", "max.indices", "min.values", "min.indices", "any",
           "all"]


@pytest.mark.parametrize("dtype", DTYPES + [torch.uint8, torch.int8], ids=str)
@pytest.mark.parametrize("name", EXTREMA)
def test_extrema_and_tests_give_the_cpus_bits(name, dtype):
    call = call_of(name)
    tensor = with_nan(dtype, (3, 4, 5))
    for dim in dims_of(name):
        for keepdim in [False, True]:
            same_bits_or_error(lambda t: call(t, dim, keepdim), tensor)
            same_bits_or_error(lambda t: call(t.transpose(0, 2), dim, keepdim), tensor)
            if "." in name:
                continue

            def with_out(t, shape=(0,)):
                reference = call(t.cpu(), dim, keepdim)
                out = torch.empty(shape, dtype=reference.dtype, device=t.device)
                assert call(t, dim, keepdim, out=out) is out
                return out
            same_bits_or_error(with_out, tensor)
            same_bits_or_error(lambda t: with_out(t, call(t.cpu(), dim, keepdim).shape), tensor)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("op", [torch.max, torch.min], ids=["max", "min"])
def test_max_and_min_over_a_dimension_into_out_tensors(op, dtype):
    def into(shape, values_dtype=None):
        def function(t, dim, keepdim):
            values = torch.empty(shape, dtype=values_dtype or t.dtype, device=t.device)
            indices = torch.empty(shape, dtype=torch.int64, device=t.device)
            result = op(t, dim, keepdim, out=(values, indices))
            assert result[0] is values and result[1] is indices
            return torch.cat([values.double().flatten(), indices.double().flatten()])
        return function

    tensor = with_nan(dtype, (3, 4, 5))
    for dim, keepdim in [(0, False), (-1, True), (1, False)]:
        same_bits_or_error(lambda t: into((0,))(t, dim, keepdim), tensor)
        same_bits_or_error(lambda t: into((0,))(t.transpose(0, 2), dim, keepdim), tensor)
        shape = op(tensor, dim, keepdim).values.shape
        same_bits_or_error(lambda t: into(shape)(t, dim, keepdim), tensor)
    # Values of another dtype: the CPU's error, at the call.
    same_error_at_the_call(lambda t: into((0,), torch.float16)(t, 0, False), tensor)


def same_error_at_the_call(function, tensor):
    """`function` raises the same error, type and first line, on the CPU and, at the call, on openreg."""
    with pytest.raises((RuntimeError, IndexError)) as cpu_error:
        function(tensor)
    with pytest.raises(cpu_error.type) as device_error:
        function(tensor.openreg())
    assert str(device_error.value).split("\n")[0] == str(cpu_error.value).split("\n")[0]


def test_extrema_errors_come_at_the_call_and_leave_the_device_working():
    empty = torch.empty(0, 3)
    same_error_at_the_call(lambda t: torch.amax(t, 0), empty)
    same_error_at_the_call(lambda t: torch.argmin(t), empty)
    same_error_at_the_call(lambda t: torch.max(t, 0), empty)
    same_error_at_the_call(lambda t: torch.any(t, 2), torch.ones(2, 3))
    same_error_at_the_call(lambda t: torch.amin(t, (0, 0)), torch.ones(2, 3))
    # An out= tensor of another dtype than the result's.
    same_error_at_the_call(lambda t: torch.argmax(t, 0, out=torch.empty(0, device=t.device)), torch.ones(2, 3))
    same_error_at_the_call(lambda t: torch.max(t, 0, out=(torch.empty(0, device=t.device),
                                                          torch.empty(0, device=t.device))), torch.ones(2, 3))
    # Over a dimension of size 0 that is not reduced, the results are empty, as on the CPU.
    same_bits_or_error(lambda t: torch.amax(t, 1), empty)
    same_bits_or_error(lambda t: torch.any(t, 1), empty)
    assert_same(torch.argmax(torch.arange(6.0, device="openreg")), torch.tensor(5))


def test_extrema_take_the_structured_path_and_leave_the_rest_to_the_fallback():
    counting = CountingMeta()
    # The fallback sizes its results with the ops' Meta kernels; the structured path calls ATen's C++ meta functions.
    counting.replace("amax", lambda t, dim=(), keepdim=False: torch.empty((), dtype=t.dtype, device="meta"))
    counting.replace("argmax", lambda t, dim=None, keepdim=False: torch.empty((), dtype=torch.int64, device="meta"))
    counting.replace("any.dim", lambda t, dim, keepdim=False: torch.empty((), dtype=torch.bool, device="meta"))
    counting.replace("all", lambda t: torch.empty((), dtype=torch.bool, device="meta"))
    counting.replace("max.dim", lambda t, dim, keepdim=False: (torch.empty((), dtype=t.dtype, device="meta"),
                                                                torch.empty((), dtype=torch.int64, device="meta")))
    counting.replace("sum.dim_IntList", lambda t, dim, keepdim=False, *, dtype=None: torch.empty(
        (), dtype=torch.int64, device="meta"))
    counting.replace("min.dim_min", lambda t, dim, keepdim=False, *, min, min_indices: (min, min_indices))
    try:
        # Shapes no other test uses, so no cached meta result hides a call.
        x = rounded_tensor(torch.float32, (17, 3)).openreg()
        mask = x > 0
        torch.amax(x, 0)
        torch.argmax(x)
        torch.any(mask, 1)
        torch.all(mask)
        torch.max(x, 1)
        torch.min(x, 0, out=(torch.empty(0, device="openreg"), torch.empty(0, dtype=torch.int64, device="openreg")))
        mask.sum()
        torch.openreg.synchronize()
        assert counting.calls == []
        # argmax of bools: ATen's CPU loop refuses them; the fallback raises its error.
        with pytest.raises(RuntimeError, match=r"argmax\(\): does not support bool input"):
            torch.argmax(mask)
            torch.openreg.synchronize()
        assert counting.calls == ["argmax"]
    finally:
        counting.library._destroy()


def test_extrema_gradients_are_the_cpus():
    x = rounded_tensor(torch.float32, (4, 6))
    for function in [lambda t: torch.amax(t, 1), lambda t: torch.max(t, 0).values, lambda t: torch.amin(t, (0, 1))]:
        cpu_leaf = x.clone().requires_grad_()
        leaf = x.openreg().requires_grad_()
        (function(cpu_leaf) * 3).sum().backward()
        (function(leaf) * 3).sum().backward()
        assert_same(leaf.grad, cpu_leaf.grad, rtol=0, atol=0)
