"""Advanced indexing, aten::index.Tensor, on openreg (core/aten/index_ops.cc): ATen's meta function at the call and
its CPU index loop on the stream give the CPU's results, strides and errors for every kind of index (integer tensors
on either device, boolean masks, several and non-adjacent indices, broadcasting, None and slices between them), take
the calls they can, and leave the rest to the fallback."""

import functools

import pytest
import torch

from openreg_testing import CountingMeta, assert_same, same_result_or_error, seeded_tensor

aten = torch.ops.aten

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.int64, torch.int32, torch.uint8, torch.bool,
          torch.float16, torch.bfloat16]


def same_bits_or_error(function, *arguments):
    """The CPU's result, bit for bit and with the CPU's strides, or its error."""
    same_result_or_error(function, *arguments, tolerances=lambda dtype: {"rtol": 0, "atol": 0})
    try:
        cpu = function(*arguments)
    except (RuntimeError, IndexError):
        return
    device = function(*[a.openreg() if isinstance(a, torch.Tensor) else a for a in arguments])
    assert device.stride() == cpu.stride()


def rows(n, *shape, seed=5, low=None):
    return torch.randint(-n if low is None else low, n, shape, generator=torch.Generator().manual_seed(seed))


# Each takes (x, rows, columns, mask) for an x of shape (6, 5, 4).
INDEXINGS = {
    "rows": lambda x, r, c, m: x[r],
    "rows of a transposed tensor": lambda x, r, c, m: x.transpose(0, 2)[c],
    "two adjacent": lambda x, r, c, m: x[r, c],
    "two apart": lambda x, r, c, m: x[r, :, c],
    "after a slice": lambda x, r, c, m: x[1:, c],
    "broadcast": lambda x, r, c, m: x[r[:, None], c[None, :]],
    "with None": lambda x, r, c, m: x[None, r, ..., None],
    "int32 rows": lambda x, r, c, m: x[r.int()],
    "a boolean mask": lambda x, r, c, m: x[m],
    "a mask after a slice": lambda x, r, c, m: x[1:, m[0]],
    "a zero-size index": lambda x, r, c, m: x[r[:0]],
    "a scalar tensor index": lambda x, r, c, m: x[r[0]],
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", INDEXINGS)
def test_every_kind_of_index_gives_the_cpus_result(name, dtype):
    x = seeded_tensor(dtype, (6, 5, 4))
    r, c = rows(6, 7), rows(4, 7, seed=6)
    m = seeded_tensor(torch.bool, (6, 5), 7)
    indexing = INDEXINGS[name]
    same_bits_or_error(lambda x, r, c, m: indexing(x, r, c, m), x, r, c, m)
    # Index tensors left on the CPU, as CUDA allows.
    device_x = x.openreg()
    assert_same(indexing(device_x, r, c, m), indexing(x, r, c, m), rtol=0, atol=0)


def test_index_takes_the_loop_and_leaves_the_rest_to_the_fallback():
    counting = CountingMeta()
    # The fallback sizes its result with the op's Meta kernel; the loop path runs ATen's C++ meta function.
    counting.replace("index.Tensor", lambda self, indices: torch.empty(
        (indices[0].numel(),) + tuple(self.shape[1:]), dtype=self.dtype, device="meta"))
    try:
        # A shape no other test uses, so no cached meta result hides a call.
        x = seeded_tensor(torch.float32, (19, 3)).openreg()
        r = rows(19, 4).openreg()
        x[r]
        x[r.cpu()]
        x[x[:, 0] > 0]
        torch.openreg.synchronize()
        assert counting.calls == []
        # A dtype the loop path leaves to the fallback.
        seeded_tensor(torch.complex32 if hasattr(torch, "complex32") else torch.cfloat, (19, 3)).openreg()[r]
        torch.openreg.synchronize()
        assert counting.calls == ["index.Tensor"]
    finally:
        counting.library._destroy()


def test_gradients_through_indexing_match_the_cpus():
    x = seeded_tensor(torch.float32, (8, 6))
    r = rows(8, 10, low=0)
    results = {}
    for device in ("cpu", "openreg"):
        leaf = x.to(device).detach().requires_grad_()
        y = leaf[r.to(device)] * 2 + leaf[leaf > 0].sum()
        y.sum().backward()
        results[device] = (y.detach(), leaf.grad)
    for device_result, cpu_result in zip(results["openreg"], results["cpu"]):
        assert_same(device_result, cpu_result, rtol=0, atol=0)


def test_the_source_can_be_dropped_and_rewritten_after_the_call():
    # The loop reads the indexed tensor and the indices when the stream runs it: their memory must outlive the
    # Python objects and keep the values they had at the call.
    x = seeded_tensor(torch.float32, (64, 8))
    r = rows(64, 32, low=0)
    device_x, device_r = x.openreg(), r.openreg()
    result = device_x[device_r]
    device_x.fill_(0)
    device_r.zero_()
    del device_x, device_r
    assert_same(result, x[r], rtol=0, atol=0)


def test_errors_and_the_device_stays_usable():
    x = torch.ones(4, 3, device="openreg")
    # The meta function's, at the call.
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        x[torch.zeros(1, dtype=torch.long, device="openreg"), torch.zeros(1, dtype=torch.long),
          torch.zeros(1, dtype=torch.long)]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[torch.zeros(2, device="openreg")]
    with pytest.raises(IndexError, match=r"The shape of the mask \[3\] at index 0 does not match the shape of the "
                                         r"indexed tensor \[4, 3\] at index 0"):
        x[torch.ones(3, dtype=torch.bool, device="openreg")]
    with pytest.raises(IndexError, match="shape mismatch: indexing tensors could not be broadcast together"):
        x[torch.zeros(2, dtype=torch.long, device="openreg"), torch.zeros(3, dtype=torch.long, device="openreg")]
    # An index out of range is in the values: the loop finds it on the stream, and the next synchronization
    # raises it, as a device error (CUDA's is a device-side assertion).
    with pytest.raises(RuntimeError, match="index 7 is out of bounds for dimension 0 with size 4"):
        x[torch.tensor([7], device="openreg")]
        torch.openreg.synchronize()
    assert_same(x[torch.tensor([1, -1], device="openreg")], torch.ones(2, 3), rtol=0, atol=0)
