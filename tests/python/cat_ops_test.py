"""torch.cat on openreg (core/aten/cat_ops.cc): ATen's C++ meta function at the call and its CPU implementation on
the stream, or the CPU fallback for the calls that path leaves to it, give the CPU's results (bit for bit),
dtypes, memory formats, gradients and errors."""

import re

import pytest
import torch

from openreg_testing import (CountingMeta, assert_same, raises_the_cpus_error_at_the_call, same_bits_as_cpu,
                             seeded_tensor)

# The dtypes the direct path takes, and ones it leaves to the fallback.
TAKEN = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
         torch.float32, torch.float64, torch.complex64, torch.complex128]
LEFT = [torch.uint16, torch.uint32, torch.complex32]


def cat_out(out_dtype=None, out_shape=(0,), memory_format=None):
    """torch.cat with out= a fresh tensor of `out_shape` on the inputs' device; checks it returns that tensor."""
    def function(tensors, dim=0):
        out = torch.empty(out_shape, dtype=out_dtype or tensors[0].dtype, device=tensors[0].device)
        if memory_format is not None:
            out = out.contiguous(memory_format=memory_format)
        assert torch.cat(tensors, dim, out=out) is out
        return out
    return function


@pytest.mark.parametrize("dtype", TAKEN + LEFT, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_functional_and_out_give_the_cpus_bits(dim, dtype):
    tensors = [seeded_tensor(dtype, shape, seed) for seed, shape in enumerate([(3, 5), (3, 5), (3, 5)])]
    if dim == 0:
        tensors.append(seeded_tensor(dtype, (2, 5), 7))
    same_bits_as_cpu(lambda ts: torch.cat(ts, dim), tensors)
    same_bits_as_cpu(lambda ts: cat_out()(ts, dim), tensors)
    # An out= tensor of the result's shape is written where it is.
    same_bits_as_cpu(lambda ts: cat_out(out_shape=torch.cat(ts, dim).shape)(ts, dim), tensors)


@pytest.mark.parametrize("case", [
    [torch.int32, torch.float32],
    [torch.bool, torch.uint8],
    [torch.int64, torch.float16, torch.bfloat16],
    [torch.float32, torch.complex64],
    [torch.float64, torch.float32],
], ids=str)
def test_mixed_dtypes_promote_as_on_the_cpu(case):
    tensors = [seeded_tensor(dtype, (2, 3), seed) for seed, dtype in enumerate(case)]
    same_bits_as_cpu(lambda ts: torch.cat(ts, 1), tensors)
    same_bits_as_cpu(lambda ts: cat_out(out_dtype=torch.cat(ts).dtype)(ts, 0), tensors)
    # An out= tensor of the first tensor's dtype: converted into, or the CPU's type error where the promoted
    # dtype cannot be cast to it.
    same_bits_as_cpu(lambda ts: cat_out()(ts, 0), tensors)


def test_out_of_another_dtype_converts_or_raises_as_on_the_cpu():
    floats = [seeded_tensor(torch.float32, (2, 3), seed) for seed in range(2)]
    same_bits_as_cpu(cat_out(out_dtype=torch.float64), floats)
    same_bits_as_cpu(cat_out(out_dtype=torch.complex64), floats)
    # Float into integers: the meta function's type error, at the call.
    same_bits_as_cpu(cat_out(out_dtype=torch.int32), floats)
    same_bits_as_cpu(cat_out(out_dtype=torch.float32), [seeded_tensor(torch.complex64, (2, 2))])


def test_legacy_empty_tensors_are_skipped():
    a, b = seeded_tensor(torch.float32, (2, 3)), seeded_tensor(torch.float32, (4, 3), 1)
    empty = torch.empty(0)
    for dim in (0, 1, -1):
        same_bits_as_cpu(lambda ts: torch.cat(ts, dim), [empty, a, empty, torch.empty(0, dtype=torch.float64)])
    same_bits_as_cpu(lambda ts: torch.cat(ts), [a, empty, b])
    same_bits_as_cpu(lambda ts: cat_out()(ts), [empty, a, b])
    # Only legacy empties: a (0,) result, and an out= tensor resized to it.
    same_bits_as_cpu(lambda ts: torch.cat(ts), [empty, empty])
    same_bits_as_cpu(lambda ts: cat_out(out_shape=(3,))(ts), [empty, empty])


def test_zero_size_results_and_one_element_tensors():
    same_bits_as_cpu(lambda ts: torch.cat(ts, 0), [torch.empty(0, 3), torch.empty(0, 3)])
    same_bits_as_cpu(lambda ts: torch.cat(ts, 1), [torch.empty(4, 0), torch.empty(4, 0, dtype=torch.int32)])
    same_bits_as_cpu(lambda ts: cat_out(out_shape=(5, 5))(ts, 1), [torch.empty(0, 2), torch.empty(0, 3)])
    same_bits_as_cpu(lambda ts: torch.cat(ts), [torch.tensor([1.5]), torch.tensor([-2.0]), torch.tensor([3.0])])
    same_bits_as_cpu(lambda ts: torch.cat(ts, 1), [torch.tensor([[7]]), torch.tensor([[8]])])
    same_bits_as_cpu(lambda ts: torch.cat(ts), [seeded_tensor(torch.float32, (1, 1, 1))])


def test_views_and_repeated_tensors():
    base = seeded_tensor(torch.float64, (6, 8))
    views = [base.t(), base[:, ::2].t()[:, :6], base.t()[2:5].contiguous()[:, :6].expand(3, 6)]
    same_bits_as_cpu(lambda b: torch.cat([b.t(), b.t()[::2], b.t()], 0), base)
    same_bits_as_cpu(lambda ts: torch.cat(ts, 0), views)
    same_bits_as_cpu(lambda b: torch.cat([b, b, b[1:3]], 0), base)
    # A result written into a transposed out= tensor of the right shape.
    same_bits_as_cpu(lambda b: torch.cat([b, b], 1, out=torch.empty(16, 6, dtype=b.dtype, device=b.device).t()), base)


def test_memory_format_follows_the_inputs():
    image = seeded_tensor(torch.float32, (2, 3, 4, 5))
    last = image.contiguous(memory_format=torch.channels_last)
    for dim in (0, 1, 3):
        # Channels-last inputs give a channels-last result; mixed ones a contiguous one.
        same_bits_as_cpu(lambda ts: torch.cat(ts, dim), [last, last])
        same_bits_as_cpu(lambda ts: torch.cat(ts, dim), [last, image])
        same_bits_as_cpu(lambda ts: cat_out()(ts, dim), [last, last])
        same_bits_as_cpu(lambda ts: cat_out(out_shape=torch.cat([image, image], dim).shape)(ts, dim), [last, last])
        same_bits_as_cpu(lambda ts: cat_out(out_shape=torch.cat([image, image], dim).shape,
                                       memory_format=torch.channels_last)(ts, dim), [image, image])
    volume = seeded_tensor(torch.float32, (2, 3, 2, 4, 5)).contiguous(memory_format=torch.channels_last_3d)
    same_bits_as_cpu(lambda ts: torch.cat(ts, 1), [volume, volume])


def test_many_tensors():
    # Longer than any inline buffer of the path (the held list, the alias table's linear search).
    tensors = [seeded_tensor(torch.float32, (i % 3 + 1, 4), i) for i in range(100)]
    same_bits_as_cpu(lambda ts: torch.cat(ts, 0), tensors)
    same_bits_as_cpu(lambda ts: cat_out()(ts, 0), tensors)
    same_bits_as_cpu(lambda ts: torch.cat(ts, 1), [seeded_tensor(torch.int64, (3, 1), i) for i in range(70)])
    # Large enough for the CPU implementation's parallel copies.
    same_bits_as_cpu(lambda ts: torch.cat(ts, 1), [seeded_tensor(torch.float32, (300, 100), i) for i in range(5)])


@pytest.mark.parametrize("call", [
    lambda d: torch.cat([torch.ones(2, 3, device=d), torch.ones(3, 3, device=d)], 1),
    lambda d: torch.cat([torch.ones(2, 3, device=d), torch.ones(2, 3, 1, device=d)]),
    lambda d: torch.cat([torch.ones(2, 3, device=d)], 2),
    lambda d: torch.cat([torch.ones(2, 3, device=d)], -3),
    lambda d: torch.cat([torch.ones((), device=d), torch.ones((), device=d)]),
    lambda d: torch.cat([], out=torch.empty(0, device=d)),
    lambda d: torch.cat([torch.ones(2, device=d)], out=torch.empty(0, dtype=torch.int64, device=d)),
    lambda d: (lambda x: torch.cat([x, x], out=x))(torch.ones(4, device=d)),
    lambda d: (lambda x: torch.cat([x[:2], x[:2]], out=x))(torch.ones(4, device=d)),
    lambda d: torch.cat([torch.ones(2, device=d)] * 2, out=torch.empty(1, device=d).expand(4)),
], ids=["sizes", "dims", "dim-past", "dim-before", "zero-dim", "empty-list", "cast", "out-is-input",
        "out-overlaps-input", "out-overlaps-itself"])
def test_errors_come_at_the_call_and_the_device_stays_usable(call):
    raises_the_cpus_error_at_the_call(call)
    a = torch.arange(4.0)
    assert_same(torch.cat([a.openreg(), a.openreg()]), torch.cat([a, a]))


def test_calls_the_fallback_takes_give_its_results_and_errors():
    a = seeded_tensor(torch.complex64, (2, 3))
    # Lazily conjugated and negated tensors.
    same_bits_as_cpu(lambda x: torch.cat([x.conj(), x]), a)
    same_bits_as_cpu(lambda x: torch.cat([x, torch.ops.aten._neg_view(x)]), a)
    same_bits_as_cpu(lambda x: torch.cat([x, x], out=torch.zeros(4, 3, dtype=x.dtype, device=x.device).conj()), a)
    # A CPU tensor mixed in, and an out= tensor on the CPU: the device mix-up error.
    with pytest.raises(RuntimeError, match=re.escape("openreg")):
        torch.cat([a.openreg(), a])
        torch.openreg.synchronize()
    with pytest.raises(RuntimeError, match=re.escape("openreg")):
        torch.cat([a.openreg(), a.openreg()], out=torch.empty(0, dtype=a.dtype))
        torch.openreg.synchronize()


def test_tensors_on_another_device_concatenate_there():
    if torch.openreg.device_count() < 2:
        pytest.skip("one openreg device")
    a, b = seeded_tensor(torch.float32, (2, 3)), seeded_tensor(torch.float32, (1, 3), 1)
    result = torch.cat([a.to("openreg:1"), b.to("openreg:1")])
    assert result.device == torch.device("openreg:1")
    torch.testing.assert_close(result.cpu(), torch.cat([a, b]), rtol=0, atol=0)
    # Two devices in one call: the fallback's device error.
    with pytest.raises(RuntimeError, match="same device"):
        torch.cat([a.to("openreg:1"), b.to("openreg:0")])
        torch.openreg.synchronize()


def test_gradients_match_the_cpus():
    tensors = [seeded_tensor(torch.float32, shape, seed) for seed, shape in enumerate([(2, 3), (4, 3), (1, 3)])]

    def gradients(ts, dim):
        ts = [t.detach().requires_grad_(True) for t in ts]
        result = torch.cat(ts, dim)
        weights = torch.arange(result.numel(), device=result.device, dtype=result.dtype).reshape(result.shape)
        (result * weights).sum().backward()
        return torch.cat([t.grad.flatten() for t in ts])

    same_bits_as_cpu(lambda ts: gradients(ts, 0), tensors)
    same_bits_as_cpu(lambda ts: gradients([t.t() for t in ts], 1), tensors)


def test_inputs_stay_alive_and_streams_are_ordered():
    results = [torch.cat([torch.full((3,), float(i), device="openreg"), torch.full((2,), -float(i), device="openreg")])
               for i in range(20)]
    stream = torch.openreg.Stream()
    a = torch.zeros(4, device="openreg")
    stream.wait_stream(torch.openreg.current_stream())
    with torch.openreg.stream(stream):
        for _ in range(3):
            a = torch.cat([a + 1, a])[:4] * 2
    torch.openreg.current_stream().wait_stream(stream)
    for i, result in enumerate(results):
        assert_same(result, torch.tensor([float(i)] * 3 + [-float(i)] * 2))
    expected = torch.zeros(4)
    for _ in range(3):
        expected = torch.cat([expected + 1, expected])[:4] * 2
    assert_same(a, expected)


def test_the_direct_kernel_does_not_take_the_fallback():
    # The fallback sizes cat's results with the Meta kernel of cat (the functional overload) or of cat.out (which
    # ATen's composite for devices without a cat kernel calls); the direct path calls the C++ meta function.
    counting = CountingMeta()

    def result_of(tensors, dim):
        shape = list(tensors[0].shape)
        shape[dim] = sum(t.shape[dim] for t in tensors)
        return torch.empty(shape, dtype=tensors[0].dtype, device="meta")

    counting.replace("cat", lambda tensors, dim=0: result_of(tensors, dim))
    counting.replace("cat.out", lambda tensors, dim, out: out.resize_(result_of(tensors, dim).shape))
    try:
        # Shapes no other test uses, so no cached meta result hides a call.
        x = seeded_tensor(torch.float32, (7, 11)).openreg()
        torch.cat([x, x], 1)
        torch.cat([x, x], 0, out=torch.empty(0, device="openreg"))
        torch.cat([x, x.to(torch.float64)], 1)
        torch.openreg.synchronize()
        assert counting.calls == []
        # The check can fail: dtypes the direct path leaves go to the fallback.
        y = seeded_tensor(torch.uint16, (7, 13)).openreg()
        torch.cat([y, y])
        z = seeded_tensor(torch.complex32, (7, 17)).openreg()
        torch.cat([z, z], 1, out=torch.empty(0, dtype=torch.complex32, device="openreg"))
        torch.openreg.synchronize()
        assert counting.calls == ["cat", "cat.out"]
    finally:
        counting.library._destroy()
