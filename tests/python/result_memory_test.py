"""Functional kernels computing their results in their outputs' memory.

Note [Results computed in their outputs' memory] (core/aten/result_memory_plan.h): ops whose results the fallback
copies into outputs it allocated first (convolution's out= overload is ATen's generated copy) lend an output's memory
to the kernel allocation that became the result on the previous run, so the copy is skipped. These tests check the
values against the CPU, bitwise, on the paths where the loan hits, misses and is refused, and that a kernel keeping
lent memory is an error, not a silent alias.
"""

import pytest
import torch
import torch.nn.functional as F

from openreg_testing import assert_same

EXACT = dict(rtol=0, atol=0)


def _conv_cases():
    generator = torch.Generator().manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, generator=generator)

    return {
        "conv2d, the bench's shape": (F.conv2d, randn(8, 16, 64, 64), randn(32, 16, 3, 3), randn(32), dict(padding=1)),
        "conv2d, no bias, stride 2": (F.conv2d, randn(2, 3, 17, 17), randn(8, 3, 3, 3), None, dict(stride=2)),
        "conv2d, groups": (F.conv2d, randn(2, 8, 12, 12), randn(8, 4, 3, 3), randn(8), dict(groups=2, padding=1)),
        "conv2d, channels last": (
            F.conv2d,
            randn(4, 16, 20, 20).to(memory_format=torch.channels_last),
            randn(16, 16, 3, 3).to(memory_format=torch.channels_last),
            randn(16),
            dict(padding=1),
        ),
        "conv1d": (F.conv1d, randn(4, 6, 50), randn(10, 6, 5), randn(10), dict()),
        "conv3d": (F.conv3d, randn(2, 3, 6, 8, 8), randn(4, 3, 3, 3, 3), randn(4), dict(padding=1)),
        "conv_transpose2d": (F.conv_transpose2d, randn(2, 8, 9, 9), randn(8, 4, 3, 3), randn(4), dict(stride=2)),
    }


@pytest.mark.parametrize("case", list(_conv_cases()))
def test_convolution_forward_equals_the_cpu_on_every_run(case):
    function, x, weight, bias, options = _conv_cases()[case]
    expected = function(x, weight, bias, **options)
    on_device = [t.to("openreg") if t is not None else None for t in (x, weight, bias)]
    # The first run learns which allocation is the result; later runs lend it the output's memory.
    results = [function(*on_device, **options) for _ in range(3)]
    for result in results:
        assert_same(result, expected, **EXACT)
        assert result.stride() == expected.stride()


@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_convolution_gradients_equal_the_cpu_on_every_run(input_requires_grad):
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(4, 8, 16, 16, generator=generator)
    weight = torch.randn(12, 8, 3, 3, generator=generator)
    bias = torch.randn(12, generator=generator)
    grad = torch.randn(4, 12, 16, 16, generator=generator)

    def gradients(device):
        leaves = [t.detach().to(device).requires_grad_(requires_grad)
                  for t, requires_grad in ((x, input_requires_grad), (weight, True), (bias, True))]
        F.conv2d(*leaves, padding=1).backward(grad.to(device))
        return [leaf.grad for leaf in leaves]

    expected = gradients("cpu")
    for _ in range(3):
        for got, want in zip(gradients("openreg"), expected):
            if want is None:
                assert got is None
            else:
                assert_same(got, want, **EXACT)


def test_a_convolution_allocates_no_device_memory_for_its_result_besides_its_output():
    x, weight, bias = (t.to("openreg") for t in (torch.randn(8, 16, 64, 64), torch.randn(32, 16, 3, 3),
                                                torch.randn(32)))
    output_bytes = 8 * 32 * 64 * 64 * 4
    for _ in range(2):
        F.conv2d(x, weight, bias, padding=1)
    torch.openreg.synchronize()
    before = torch.openreg.memory_stats()["allocated_bytes.all.allocated"]
    F.conv2d(x, weight, bias, padding=1)
    torch.openreg.synchronize()
    allocated = torch.openreg.memory_stats()["allocated_bytes.all.allocated"] - before
    # The output, and oneDNN's blocked result it reorders from, also of the output's size; without the loan the
    # dense result it reorders into is a third.
    assert allocated < 3 * output_bytes, allocated / output_bytes


def test_results_of_one_size_equal_the_cpu_when_the_shapes_change_between_runs():
    # The attention backward's three gradients: all of one size on the first run, two of one size on the next, so
    # the ordinals learned first lend the key gradient's output to the value gradient's allocation.
    generator = torch.Generator().manual_seed(3)

    def gradients(device, lengths):
        leaves = [torch.randn(2, 3, length, 8, generator=generator).to(device).requires_grad_()
                  for length in (lengths[0], lengths[1], lengths[1])]
        out = F.scaled_dot_product_attention(*leaves)
        out.backward(torch.ones_like(out))
        return [out.detach()] + [leaf.grad for leaf in leaves]

    for lengths in [(16, 16), (7, 12), (7, 12), (33, 5), (16, 16)]:
        state = generator.get_state()
        expected = gradients("cpu", lengths)
        generator.set_state(state)
        for got, want in zip(gradients("openreg", lengths), expected):
            assert_same(got, want, **EXACT)


def test_embedding_gradient_whose_out_overload_is_generated_equals_the_cpu():
    weight = torch.randn(20, 6, generator=torch.Generator().manual_seed(2))
    indices = torch.tensor([[1, 4, 4, 9], [0, 19, 4, 2]])

    def gradient(device):
        leaf = weight.detach().to(device).requires_grad_()
        F.embedding(indices.to(device), leaf, padding_idx=2).pow(2).sum().backward()
        return leaf.grad

    expected = gradient("cpu")
    for _ in range(3):
        assert_same(gradient("openreg"), expected, **EXACT)


@pytest.fixture(scope="module")
def keeping_op():
    """A test op whose CPU kernel keeps one of two buffers of its result's size in a cache, alternating which."""
    library = torch.library.Library("openreg_result_memory_test", "DEF")
    library.define("keep_one(Tensor x) -> Tensor")
    cache = []
    calls = [0]

    def kernel(x):
        first, second = torch.empty_like(x), torch.empty_like(x)
        calls[0] += 1
        result, kept = (first, second) if calls[0] % 2 else (second, first)
        torch.mul(x, 2, out=result)
        kept.fill_(7)
        cache.append(kept)
        return result

    library.impl("keep_one", kernel, "CPU")
    library.impl("keep_one", lambda x: torch.empty_like(x), "Meta")
    yield torch.ops.openreg_result_memory_test.keep_one.default, cache
    cache.clear()
    library._destroy()


def test_a_kernel_keeping_memory_it_was_lent_raises_and_is_never_lent_again(keeping_op):
    op, cache = keeping_op
    x = torch.arange(4096, dtype=torch.float32)
    # The first run keeps its second buffer and returns its first: the next run is lent the output's memory for
    # its first buffer, and keeps it.
    assert_same(op(x.to("openreg")), x * 2, **EXACT)
    with pytest.raises(RuntimeError, match="kept a buffer past its return in memory openreg had lent"):
        op(x.to("openreg"))
        torch.openreg.synchronize()
    for _ in range(3):
        assert_same(op(x.to("openreg")), x * 2, **EXACT)
    # Frees the kept buffers, the lent one included, which kept its output's memory from being handed out again.
    cache.clear()
    fresh = [torch.full((4096,), float(i), device="openreg") for i in range(8)]
    for i, tensor in enumerate(fresh):
        assert_same(tensor, torch.full((4096,), float(i)))
