"""torch.gather on openreg (core/aten/gather_ops.cc): ATen's C++ meta function at the call and its CPU implementation
on the stream, or the CPU fallback for the calls that path leaves to it, give the CPU's results (bit for bit), dtypes,
strides, gradients and errors; an index out of range raises at the next synchronization."""

import re

import pytest
import torch

from openreg_testing import (CountingMeta, assert_same, raises_the_cpus_error_at_the_call, same_bits_as_cpu,
                             seeded_tensor)

# The dtypes of `self` the direct path takes, and ones it leaves to the fallback (the CPU's gather has no kernel
# for them: its error, from the stream).
TAKEN = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
         torch.float32, torch.float64, torch.complex64, torch.complex128]
LEFT = [torch.uint16, torch.complex32]


def indices(high, shape, seed=3, dtype=torch.int64):
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def gather_out(out_shape=(0,), out_dtype=None):
    """torch.gather with out= a fresh tensor of `out_shape` on self's device; checks it returns that tensor."""
    def function(x, dim, index):
        out = torch.empty(out_shape, dtype=out_dtype or x.dtype, device=x.device)
        assert torch.gather(x, dim, index, out=out) is out
        return out
    return function


@pytest.mark.parametrize("dtype", TAKEN + LEFT, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_functional_and_out_give_the_cpus_bits(dim, dtype):
    x = seeded_tensor(dtype, (5, 6))
    # Smaller than `self` along the other dimension too, as gather allows.
    index = indices(x.shape[dim], (4, 5) if dim == 0 else (5, 3))
    at_the_call = dtype in TAKEN
    same_bits_as_cpu(torch.gather, x, dim, index, at_the_call=at_the_call)
    same_bits_as_cpu(gather_out(), x, dim, index, at_the_call=at_the_call)
    # An out= tensor of the result's shape is written where it is.
    same_bits_as_cpu(gather_out(index.shape), x, dim, index, at_the_call=at_the_call)


@pytest.mark.parametrize("case", [
    "int32 index", "1-d", "0-d", "0-d self, 1-d index", "3-d along the middle", "transposed self",
    "strided self", "transposed index", "expanded index along 0", "expanded index along 1", "sparse_grad",
    "repeated rows", "large",
])
def test_shapes_layouts_and_index_dtypes(case):
    x = seeded_tensor(torch.float32, (6, 8))
    calls = {
        "int32 index": lambda: (x, 1, indices(8, (6, 3), dtype=torch.int32)),
        "1-d": lambda: (x[0], 0, indices(8, (11,))),
        "0-d": lambda: (x[0, 0], 0, torch.tensor(0)),
        "0-d self, 1-d index": lambda: (x[0, 0], 0, torch.zeros(1, dtype=torch.int64)),
        "3-d along the middle": lambda: (seeded_tensor(torch.float64, (3, 4, 5)), 1, indices(4, (3, 7, 2))),
        "transposed self": lambda: (x.t(), 0, indices(6, (8, 6))),
        "strided self": lambda: (x[::2, 1::3], -1, indices(3, (3, 3))),
        "transposed index": lambda: (x, 0, indices(6, (8, 6)).t()),
        # The CPU implementation's expanded-index path (an index broadcast along the other dimension).
        "expanded index along 0": lambda: (seeded_tensor(torch.float32, (40, 32)), 0,
                                           indices(40, (30, 1)).expand(30, 32)),
        "expanded index along 1": lambda: (x, 1, indices(8, (1, 5)).expand(6, 5)),
        "sparse_grad": lambda: (x, 1, indices(8, (6, 2)), True),
        "repeated rows": lambda: (x, 0, torch.zeros(9, 8, dtype=torch.int64)),
        # Large enough for the CPU implementation's parallel loop.
        "large": lambda: (seeded_tensor(torch.float32, (300, 200)), 1, indices(200, (300, 150))),
    }
    arguments = calls[case]()
    same_bits_as_cpu(lambda x, dim, index, *rest: torch.gather(x, dim, index, sparse_grad=bool(rest)), *arguments)
    same_bits_as_cpu(lambda x, dim, index, *rest: gather_out()(x, dim, index), *arguments)


def test_empty_indices_and_tensors():
    x = seeded_tensor(torch.float32, (4, 3))
    same_bits_as_cpu(torch.gather, x, 0, torch.empty(0, 3, dtype=torch.int64))
    same_bits_as_cpu(torch.gather, x, 1, torch.empty(4, 0, dtype=torch.int64))
    # An empty index of another dtype is not checked, as on the CPU.
    same_bits_as_cpu(torch.gather, x, 1, torch.empty(4, 0, dtype=torch.float32))
    same_bits_as_cpu(torch.gather, torch.empty(0, 3), 0, torch.empty(0, 3, dtype=torch.int64))
    same_bits_as_cpu(gather_out(out_shape=(2, 2)), x, 0, torch.empty(0, 3, dtype=torch.int64))


def test_out_of_another_layout_or_dtype():
    x = seeded_tensor(torch.float64, (5, 6))
    index = indices(6, (5, 4))
    # A transposed out= tensor of the result's shape keeps its strides.
    same_bits_as_cpu(lambda x, i: torch.gather(x, 1, i, out=torch.empty(4, 5, dtype=x.dtype, device=x.device).t()),
                     x, index)
    # An out= tensor of another shape is resized (with the CPU's warning), one of another dtype is the CPU's error.
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        same_bits_as_cpu(gather_out(out_shape=(2, 2)), x, 1, index)
    same_bits_as_cpu(gather_out(out_dtype=torch.float32), x, 1, index)


@pytest.mark.parametrize("call", [
    lambda d: torch.gather(torch.ones(4, 3, device=d), 0, torch.zeros(2, 3, device=d)),
    lambda d: torch.gather(torch.ones(4, 3, device=d), 0, torch.zeros(2, 3, dtype=torch.int16, device=d)),
    lambda d: torch.gather(torch.ones(4, 3, device=d), 0, torch.zeros(2, 4, dtype=torch.int64, device=d)),
    lambda d: torch.gather(torch.ones(4, 3, device=d), 0, torch.zeros(2, dtype=torch.int64, device=d)),
    lambda d: torch.gather(torch.ones(4, 3, device=d), 2, torch.zeros(2, 3, dtype=torch.int64, device=d)),
    lambda d: torch.gather(torch.ones(4, 3, device=d), -3, torch.zeros(2, 3, dtype=torch.int64, device=d)),
    lambda d: (lambda x: torch.gather(x, 0, torch.zeros(4, 3, dtype=torch.int64, device=d), out=x))(
        torch.ones(4, 3, device=d)),
    lambda d: torch.gather(torch.ones(4, 3, device=d), 0, torch.zeros(1, 3, dtype=torch.int64, device=d),
                           out=torch.empty(1, device=d).expand(1, 3)),
], ids=["float-index", "int16-index", "index-larger", "index-dims", "dim-past", "dim-before", "out-is-self",
        "out-overlaps-itself"])
def test_errors_come_at_the_call_and_the_device_stays_usable(call):
    raises_the_cpus_error_at_the_call(call)
    x = torch.arange(6.0).reshape(2, 3)
    index = torch.tensor([[2, 0, 1]])
    assert_same(torch.gather(x.openreg(), 1, index.openreg()), torch.gather(x, 1, index), rtol=0, atol=0)


@pytest.mark.parametrize("bad", [7, -1])
def test_an_index_out_of_range_raises_at_the_next_synchronization(bad):
    # The index's values are read by the CPU implementation, on the stream: the call returns, and the next
    # synchronization raises the CPU's error (a device error; CUDA's is a device-side assertion).
    x = torch.ones(4, 3, device="openreg")
    with pytest.raises(RuntimeError, match=re.escape(f"index {bad} is out of bounds for dimension 0 with size 4")):
        torch.gather(x, 0, torch.tensor([[bad, 0, 0]], device="openreg"))
        torch.openreg.synchronize()
    # The process and the device keep working.
    index = torch.tensor([[3, 0, 1]])
    assert_same(torch.gather(x, 0, index.openreg()), torch.gather(torch.ones(4, 3), 0, index), rtol=0, atol=0)


def test_calls_the_fallback_takes_give_its_results_and_errors():
    x = seeded_tensor(torch.complex64, (3, 4))
    index = indices(4, (3, 2))
    # Lazily conjugated and negated tensors.
    same_bits_as_cpu(lambda x, i: torch.gather(x.conj(), 1, i), x, index)
    same_bits_as_cpu(lambda x, i: torch.gather(torch.ops.aten._neg_view(x), 1, i), x, index)
    same_bits_as_cpu(lambda x, i: torch.gather(x, 1, i, out=torch.zeros(3, 2, dtype=x.dtype, device=x.device).conj()),
                     x, index)
    # An index left on the CPU, and an out= tensor on the CPU: the device mix-up error.
    with pytest.raises(RuntimeError, match=re.escape("openreg")):
        torch.gather(x.openreg(), 1, index)
        torch.openreg.synchronize()
    with pytest.raises(RuntimeError, match=re.escape("openreg")):
        torch.gather(x.openreg(), 1, index.openreg(), out=torch.empty(0, dtype=x.dtype))
        torch.openreg.synchronize()


def test_tensors_on_another_device_gather_there():
    if torch.openreg.device_count() < 2:
        pytest.skip("one openreg device")
    x, index = seeded_tensor(torch.float32, (3, 4)), indices(4, (3, 5))
    result = torch.gather(x.to("openreg:1"), 1, index.to("openreg:1"))
    assert result.device == torch.device("openreg:1")
    torch.testing.assert_close(result.cpu(), torch.gather(x, 1, index), rtol=0, atol=0)
    # Two devices in one call: the fallback's device error.
    with pytest.raises(RuntimeError, match="same device"):
        torch.gather(x.to("openreg:1"), 1, index.to("openreg:0"))
        torch.openreg.synchronize()


@pytest.mark.parametrize("dim", [0, 1])
def test_gradients_match_the_cpus(dim):
    # gather's backward scatters the gradient back with scatter_add, repeated indices summing.
    x = seeded_tensor(torch.float32, (5, 6))
    index = indices(x.shape[dim], (7, 6) if dim == 0 else (5, 9))

    def gradient(x, index):
        x = x.detach().requires_grad_(True)
        result = torch.gather(x, dim, index)
        weights = torch.arange(result.numel(), device=x.device, dtype=x.dtype).reshape(result.shape)
        (result * weights).sum().backward()
        return x.grad

    same_bits_as_cpu(gradient, x, index)


def test_inputs_can_be_dropped_and_rewritten_after_the_call():
    # The implementation reads self and the index when the stream runs it: their memory must outlive the Python
    # objects and keep the values they had at the call.
    x, index = seeded_tensor(torch.float32, (64, 8)), indices(64, (32, 8))
    device_x, device_index = x.openreg(), index.openreg()
    result = torch.gather(device_x, 0, device_index)
    device_x.fill_(0)
    device_index.zero_()
    del device_x, device_index
    assert_same(result, torch.gather(x, 0, index), rtol=0, atol=0)


def test_the_direct_kernel_does_not_take_the_fallback():
    # The fallback sizes gather's result with the Meta kernel of the overload it runs; the direct path calls the
    # C++ meta function.
    counting = CountingMeta()
    counting.replace("gather", lambda x, dim, index, sparse_grad=False: torch.empty(
        index.shape, dtype=x.dtype, device="meta"))
    counting.replace("gather.out", lambda x, dim, index, sparse_grad=False, *, out: out.resize_(index.shape))
    try:
        # Shapes no other test uses, so no cached meta result hides a call.
        x = seeded_tensor(torch.float32, (7, 11)).openreg()
        index = indices(11, (7, 13)).openreg()
        torch.gather(x, 1, index)
        torch.gather(x, 1, index, out=torch.empty(0, device="openreg"))
        x.to(torch.float16).gather(1, index)
        torch.openreg.synchronize()
        assert counting.calls == []
        # The check can fail: a dtype the direct path leaves goes to the fallback (the CPU has no gather for it).
        with pytest.raises(RuntimeError, match="not implemented for 'UInt16'"):
            torch.gather(seeded_tensor(torch.uint16, (7, 17)).openreg(), 1, index)
            torch.openreg.synchronize()
        assert counting.calls == ["gather"]
    finally:
        counting.library._destroy()
