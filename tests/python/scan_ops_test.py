"""torch.cumsum on openreg (core/aten/scan_ops.cc): ATen's C++ meta function at the call and its CPU implementation
on the stream, or the CPU fallback for the calls that path leaves to it, give the CPU's results (bit for bit), dtypes
(integers and bools summed in int64), strides, gradients and errors."""

import pytest
import torch

from openreg_testing import (CountingMeta, assert_same, raises_the_cpus_error_at_the_call, same_bits_as_cpu,
                             seeded_tensor)

# The dtypes of `self` the direct path takes, and ones it leaves to the fallback (the wider unsigned integers,
# which sum in int64 on the CPU too, and complex half, which the CPU's cumsum does not sum: its error).
TAKEN = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
         torch.float32, torch.float64, torch.complex64, torch.complex128]
LEFT = [torch.uint16, torch.uint32, torch.complex32]


def default_result_dtype(dtype):
    return torch.int64 if not (dtype.is_floating_point or dtype.is_complex) else dtype


def cumsum_out(out_shape=(0,), out_dtype=None, dtype=None):
    """torch.cumsum with out= a fresh tensor of `out_shape` on self's device; checks it returns that tensor."""
    def function(x, dim):
        out = torch.empty(out_shape, dtype=out_dtype or default_result_dtype(x.dtype), device=x.device)
        assert torch.cumsum(x, dim, dtype=dtype, out=out) is out
        return out
    return function


def cumsum_in_place(x, dim, dtype=None):
    x = x.clone()
    assert x.cumsum_(dim, dtype=dtype) is x
    return x


@pytest.mark.parametrize("dtype", TAKEN + LEFT, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_functional_out_and_in_place_give_the_cpus_bits(dim, dtype):
    x = seeded_tensor(dtype, (5, 6))
    at_the_call = dtype in TAKEN
    same_bits_as_cpu(torch.cumsum, x, dim, at_the_call=at_the_call)
    same_bits_as_cpu(cumsum_out(), x, dim, at_the_call=at_the_call)
    # An out= tensor of the result's shape is written where it is.
    same_bits_as_cpu(cumsum_out(x.shape), x, dim, at_the_call=at_the_call)
    # In place, the tensor's own dtype (a bool tensor: the CPU's error, from the fallback).
    same_bits_as_cpu(cumsum_in_place, x, dim, at_the_call=at_the_call and dtype != torch.bool)


@pytest.mark.parametrize("source, target", [
    (torch.float32, torch.float64), (torch.float16, torch.float32), (torch.int32, torch.float32),
    (torch.bool, torch.int32), (torch.float32, torch.int64), (torch.int64, torch.float16),
    (torch.float32, torch.complex64),
    # Left to the fallback: a complex tensor summed into a real dtype (the CPU warns once per process that the
    # imaginary part is discarded), bool results (the CPU's error) and the wider unsigned dtypes.
    (torch.complex64, torch.float32), (torch.float32, torch.bool), (torch.int32, torch.uint16),
], ids=str)
def test_the_dtype_argument_and_out_of_another_dtype(source, target):
    x = seeded_tensor(source, (4, 5))
    at_the_call = target not in (torch.bool, torch.uint16) and not source.is_complex
    same_bits_as_cpu(lambda x: torch.cumsum(x, 1, dtype=target), x, at_the_call=at_the_call)
    same_bits_as_cpu(lambda x: cumsum_out(out_dtype=target, dtype=target)(x, 0), x, at_the_call=at_the_call)
    # Without `dtype`, the out= tensor's dtype is the result's.
    same_bits_as_cpu(lambda x: cumsum_out(out_dtype=target)(x, 1), x, at_the_call=at_the_call)


def test_out_and_in_place_of_another_dtype_than_asked_are_the_cpus_errors():
    x = seeded_tensor(torch.float32, (3, 4))
    # Left to the fallback, which raises the CPU's errors.
    same_bits_as_cpu(lambda x: cumsum_out(out_dtype=torch.float32, dtype=torch.float64)(x, 0), x, at_the_call=False)
    same_bits_as_cpu(lambda x: cumsum_in_place(x, 0, dtype=torch.float64), x, at_the_call=False)
    # In place in the tensor's own dtype, given explicitly.
    same_bits_as_cpu(lambda x: cumsum_in_place(x, 1, dtype=torch.float32), x)


@pytest.mark.parametrize("case", [
    "0-d", "0-d integer", "1-d", "size-1 dimension", "empty", "empty along the other dimension", "transposed",
    "strided", "channels-last", "3-d along the middle", "non-finite", "large", "large along 0",
])
def test_shapes_layouts_and_values(case):
    x = seeded_tensor(torch.float32, (6, 8))
    calls = {
        "0-d": (torch.tensor(2.5), 0),
        "0-d integer": (torch.tensor(3, dtype=torch.int32), -1),
        "1-d": (x[0], 0),
        "size-1 dimension": (x[:1], 0),
        "empty": (torch.empty(0, 4), 0),
        "empty along the other dimension": (torch.empty(0, 4), 1),
        "transposed": (x.t(), 1),
        "strided": (x[::2, 1::3], 0),
        "channels-last": (seeded_tensor(torch.float32, (2, 3, 4, 5)).contiguous(memory_format=torch.channels_last), 1),
        "3-d along the middle": (seeded_tensor(torch.float64, (3, 4, 5)), 1),
        "non-finite": (torch.tensor([[1.0, float("inf"), 2.0], [float("nan"), 1.0, -float("inf")]]), 1),
        # Large enough for the CPU implementation's parallel loop.
        "large": (seeded_tensor(torch.float32, (300, 200)), 1),
        "large along 0": (seeded_tensor(torch.bfloat16, (300, 200)), 0),
    }
    tensor, dim = calls[case]
    same_bits_as_cpu(torch.cumsum, tensor, dim)
    same_bits_as_cpu(cumsum_out(), tensor, dim)
    same_bits_as_cpu(cumsum_in_place, tensor, dim)


def test_out_written_where_it_is_or_resized():
    x = seeded_tensor(torch.float64, (5, 6))
    # A transposed out= tensor of the result's shape keeps its strides.
    same_bits_as_cpu(lambda x: torch.cumsum(x, 1, out=torch.empty(6, 5, dtype=x.dtype, device=x.device).t()), x)
    # One of another shape is resized, with the CPU's warning.
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        same_bits_as_cpu(cumsum_out(out_shape=(2, 2)), x, 0)
    # The out= tensor may be `self`, as on the CPU.
    same_bits_as_cpu(lambda x: (lambda y: torch.cumsum(y, 0, out=y))(x.clone()), x)


@pytest.mark.parametrize("call", [
    lambda d: torch.cumsum(torch.ones(4, 3, device=d), 2),
    lambda d: torch.cumsum(torch.ones(4, 3, device=d), -3),
    lambda d: torch.ones((), device=d).cumsum_(1),
], ids=["dim-past", "dim-before", "0-d-dim-past"])
def test_errors_come_at_the_call_and_the_device_stays_usable(call):
    raises_the_cpus_error_at_the_call(call)
    x = torch.arange(6.0).reshape(2, 3)
    assert_same(torch.cumsum(x.openreg(), 1), torch.cumsum(x, 1), rtol=0, atol=0)


def test_calls_the_fallback_takes_give_its_results_and_errors():
    x = seeded_tensor(torch.complex64, (3, 4))
    # Lazily conjugated and negated tensors.
    same_bits_as_cpu(lambda x: torch.cumsum(x.conj(), 1), x)
    same_bits_as_cpu(lambda x: torch.cumsum(torch.ops.aten._neg_view(x), 0), x)
    same_bits_as_cpu(lambda x: torch.cumsum(x, 1, out=torch.zeros(3, 4, dtype=x.dtype, device=x.device).conj()), x)
    # An out= tensor on the CPU: the device mix-up error.
    with pytest.raises(RuntimeError, match="openreg"):
        torch.cumsum(x.openreg(), 1, out=torch.empty(0, dtype=x.dtype))
        torch.openreg.synchronize()


def test_tensors_on_another_device_sum_there():
    if torch.openreg.device_count() < 2:
        pytest.skip("one openreg device")
    x = seeded_tensor(torch.int32, (3, 4))
    result = torch.cumsum(x.to("openreg:1"), 1)
    assert result.device == torch.device("openreg:1")
    torch.testing.assert_close(result.cpu(), torch.cumsum(x, 1), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("dim", [0, 1])
def test_gradients_match_the_cpus(dim, dtype):
    # cumsum's backward is a cumsum of the flipped gradient.
    def gradient(x):
        x = x.detach().requires_grad_(True)
        result = torch.cumsum(x, dim)
        weights = torch.arange(result.numel(), device=x.device, dtype=x.dtype).reshape(result.shape)
        (result * weights).sum().backward()
        return x.grad

    same_bits_as_cpu(gradient, seeded_tensor(dtype, (5, 6)))


def test_self_can_be_dropped_and_rewritten_after_the_call():
    x = seeded_tensor(torch.float32, (64, 8))
    device_x = x.openreg()
    result = torch.cumsum(device_x, 0)
    device_x.fill_(0)
    del device_x
    assert_same(result, torch.cumsum(x, 0), rtol=0, atol=0)


def test_the_direct_kernel_does_not_take_the_fallback():
    # The fallback sizes cumsum's result with the Meta kernel of the overload it runs; the direct path calls the
    # C++ meta function.
    counting = CountingMeta()

    def result_of(x, dtype):
        default = torch.int64 if not (x.dtype.is_floating_point or x.dtype.is_complex) else x.dtype
        return torch.empty(x.shape, dtype=dtype or default, device="meta")

    counting.replace("cumsum", lambda x, dim, *, dtype=None: result_of(x, dtype))
    counting.replace("cumsum.out", lambda x, dim, *, dtype=None, out: out.resize_(x.shape))
    counting.replace("cumsum_", lambda x, dim, *, dtype=None: x)
    try:
        # Shapes no other test uses, so no cached meta result hides a call.
        x = seeded_tensor(torch.float32, (7, 11)).openreg()
        torch.cumsum(x, 1)
        torch.cumsum(x, 0, out=torch.empty(0, device="openreg"))
        x.clone().cumsum_(1)
        (x > 0).cumsum(1)
        torch.openreg.synchronize()
        assert counting.calls == []
        # The check can fail: dtypes the direct path leaves go to the fallback.
        y = seeded_tensor(torch.uint16, (7, 13)).openreg()
        torch.cumsum(y, 1)
        torch.openreg.synchronize()
        assert counting.calls == ["cumsum"]
    finally:
        counting.library._destroy()
