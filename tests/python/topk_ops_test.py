"""torch.topk on openreg (core/aten/topk_ops.cc): ATen's C++ meta function at the call and its CPU implementation on
the stream, or the CPU fallback for the calls that path leaves to it, give the CPU's values
and indices (bit for bit, ties and NaNs in the CPU's order), strides, gradients and errors."""

import pytest
import torch

from openreg_testing import (CountingMeta, assert_same, raises_the_cpus_error_at_the_call, same_bits_as_cpu,
                             seeded_tensor)

# The dtypes the direct path takes, and ones it leaves to the fallback (the CPU's topk raises for them).
TAKEN = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
         torch.float32, torch.float64]
LEFT = [torch.bool, torch.complex64, torch.uint16]


def topk_out(x, k, dim=-1, largest=True, sorted=True, shape=(0,), values_dtype=None):
    """topk with out= tensors of `shape` on x's device, of its results' dtypes unless `values_dtype` is given."""
    values = torch.empty(shape, dtype=values_dtype or x.dtype, device=x.device)
    indices = torch.empty(shape, dtype=torch.int64, device=x.device)
    result = torch.topk(x, k, dim, largest, sorted, out=(values, indices))
    assert result[0] is values and result[1] is indices
    return values, indices


@pytest.mark.parametrize("dtype", TAKEN + LEFT, ids=str)
@pytest.mark.parametrize("largest, sorted", [(True, True), (False, True), (True, False), (False, False)])
def test_values_and_indices_are_the_cpus(largest, sorted, dtype):
    # Integers in [-4, 5): many ties, which the CPU breaks in its own order.
    x = seeded_tensor(dtype, (6, 9))
    at_the_call = dtype in TAKEN
    for dim, k in [(1, 4), (0, 3), (-1, 9)]:
        same_bits_as_cpu(lambda x: torch.topk(x, k, dim, largest, sorted), x, at_the_call=at_the_call)


@pytest.mark.parametrize("case", [
    "k = 0", "0-d", "0-d, k = 0", "1-d", "empty", "empty along the other dimension", "transposed", "strided",
    "3-d along the middle", "non-finite", "a long slice", "many slices",
])
def test_shapes_layouts_and_values(case):
    x = seeded_tensor(torch.float32, (6, 8))
    calls = {
        "k = 0": (x, 0, 1),
        "0-d": (torch.tensor(2.5), 1, 0),
        "0-d, k = 0": (torch.tensor(2.5), 0, -1),
        "1-d": (x[0], 3, 0),
        "empty": (torch.empty(0, 4), 0, 0),
        "empty along the other dimension": (torch.empty(0, 4), 2, 1),
        "transposed": (x.t(), 2, 0),
        "strided": (x[::2, 1::3], 2, 1),
        "3-d along the middle": (seeded_tensor(torch.float64, (3, 7, 5)), 3, 1),
        "non-finite": (torch.tensor([[1.0, float("nan"), 2.0, float("inf")], [float("nan"), 1.0, -float("inf"),
                                                                               float("nan")]]), 3, 1),
        # A slice long enough for the CPU's other selection algorithm, and enough slices for its parallel loop.
        "a long slice": (seeded_tensor(torch.float32, (2, 5000)), 50, 1),
        "many slices": (seeded_tensor(torch.float32, (2000, 40)), 5, 1),
    }
    tensor, k, dim = calls[case]
    for largest in (True, False):
        same_bits_as_cpu(lambda x: torch.topk(x, k, dim, largest), tensor)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16], ids=str)
def test_out_gives_the_cpus_results(dtype):
    x = seeded_tensor(dtype, (5, 7))
    same_bits_as_cpu(lambda x: topk_out(x, 3), x)
    same_bits_as_cpu(lambda x: topk_out(x, 2, 0, largest=False), x)
    same_bits_as_cpu(lambda x: topk_out(x.t(), 2, 1, sorted=False), x)
    # out= tensors of the results' shape are written where they are.
    same_bits_as_cpu(lambda x: topk_out(x, 3, shape=(5, 3)), x)


def test_out_of_another_dtype_raises_the_cpus_error_at_the_call():
    x = seeded_tensor(torch.float32, (5, 7))
    raises_the_cpus_error_at_the_call(lambda device: topk_out(x.to(device), 3, values_dtype=torch.float64))
    assert_same(torch.topk(x.openreg(), 2).values, torch.topk(x, 2).values, rtol=0, atol=0)


@pytest.mark.parametrize("call", [
    lambda d: torch.topk(torch.ones(4, 3, device=d), 4),
    lambda d: torch.topk(torch.ones(4, 3, device=d), -1),
    lambda d: torch.topk(torch.ones(4, 3, device=d), 1, 2),
    lambda d: torch.topk(torch.ones(4, 3, device=d), 1, -3),
    lambda d: torch.topk(torch.ones((), device=d), 2),
], ids=["k-past", "k-negative", "dim-past", "dim-before", "0-d-k-past"])
def test_errors_come_at_the_call_and_the_device_stays_usable(call):
    raises_the_cpus_error_at_the_call(call)
    x = torch.tensor([[3.0, 1.0, 2.0]])
    same_bits_as_cpu(lambda x: torch.topk(x, 2), x)


def test_calls_the_fallback_takes_give_its_results():
    x = seeded_tensor(torch.float32, (3, 5))
    # A lazily negated tensor is resolved before the kernel, as on the CPU.
    same_bits_as_cpu(lambda x: torch.topk(torch.ops.aten._neg_view(x), 2), x)


def test_tensors_on_another_device_select_there():
    if torch.openreg.device_count() < 2:
        pytest.skip("one openreg device")
    x = seeded_tensor(torch.float32, (3, 6))
    values, indices = torch.topk(x.to("openreg:1"), 2)
    assert values.device == indices.device == torch.device("openreg:1")
    expected = torch.topk(x, 2)
    torch.testing.assert_close(values.cpu(), expected.values, rtol=0, atol=0)
    torch.testing.assert_close(indices.cpu(), expected.indices, rtol=0, atol=0)


@pytest.mark.parametrize("dim", [0, 1])
def test_gradients_match_the_cpus(dim):
    # topk's backward scatters the gradient into the selected positions.
    def gradient(x):
        x = x.detach().requires_grad_(True)
        values, _ = torch.topk(x, 3, dim)
        weights = torch.arange(values.numel(), device=x.device, dtype=x.dtype).reshape(values.shape)
        (values * weights).sum().backward()
        return x.grad

    same_bits_as_cpu(gradient, seeded_tensor(torch.float32, (5, 6)))


def test_self_can_be_dropped_and_rewritten_after_the_call():
    x = seeded_tensor(torch.float32, (64, 8))
    device_x = x.openreg()
    values, indices = torch.topk(device_x, 3)
    device_x.fill_(0)
    del device_x
    expected = torch.topk(x, 3)
    assert_same(values, expected.values, rtol=0, atol=0)
    assert_same(indices, expected.indices, rtol=0, atol=0)


def test_the_direct_kernel_does_not_take_the_fallback():
    # The fallback sizes topk's results with the Meta kernel of the overload it runs; the direct path calls the
    # C++ meta function.
    counting = CountingMeta()

    def results_of(x, k, dim):
        shape = list(x.shape)
        shape[dim] = k
        return torch.empty(shape, dtype=x.dtype, device="meta"), torch.empty(shape, dtype=torch.int64, device="meta")

    counting.replace("topk", lambda x, k, dim=-1, largest=True, sorted=True: results_of(x, k, dim))
    counting.replace("topk.values", lambda x, k, dim=-1, largest=True, sorted=True, *, values, indices: (
        values.resize_(results_of(x, k, dim)[0].shape), indices.resize_(results_of(x, k, dim)[1].shape)))
    try:
        # Shapes no other test uses, so no cached meta result hides a call.
        x = seeded_tensor(torch.float32, (7, 11)).openreg()
        torch.topk(x, 3)
        torch.topk(x.to(torch.int32), 2, 0, largest=False)
        topk_out(x, 4)
        torch.openreg.synchronize()
        assert counting.calls == []
        # The check can fail: a dtype the CPU's topk refuses goes to the fallback, which raises its error.
        with pytest.raises(RuntimeError, match="topk does not support bool dtypes on CPU"):
            topk_out(seeded_tensor(torch.bool, (7, 13)).openreg(), 3)
            torch.openreg.synchronize()
        assert counting.calls == ["topk.values"]
    finally:
        counting.library._destroy()
