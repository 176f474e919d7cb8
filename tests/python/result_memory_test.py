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
    # The outputs are dropped at once: an asynchronous driver may run the kernel after that, and it is still lent
    # the output's memory, which nothing enqueued after it uses before it has run.
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


def _keeping_kernel(cache):
    """A CPU kernel that keeps one of two buffers of its result's size in `cache`, alternating which."""
    calls = [0]

    def kernel(x):
        first, second = torch.empty_like(x), torch.empty_like(x)
        calls[0] += 1
        result, kept = (first, second) if calls[0] % 2 else (second, first)
        torch.mul(x, 2, out=result)
        kept.fill_(7)
        cache.append(kept)
        return result

    return kernel


@pytest.fixture(scope="module")
def keeping_ops():
    """Two test ops running _keeping_kernel, one per test: an op that kept lent memory is never lent again."""
    library = torch.library.Library("openreg_result_memory_test", "DEF")
    cache = []
    ops = {}
    for name in ("keep_one", "keep_one_dropped"):
        library.define(f"{name}(Tensor x) -> Tensor")
        library.impl(name, _keeping_kernel(cache), "CPU")
        library.impl(name, lambda x: torch.empty_like(x), "Meta")
        ops[name] = getattr(torch.ops.openreg_result_memory_test, name).default
    yield ops, cache
    cache.clear()
    library._destroy()


def _assert_fresh_memory_is_intact():
    fresh = [torch.full((4096,), float(i), device="openreg") for i in range(8)]
    for i, tensor in enumerate(fresh):
        assert_same(tensor, torch.full((4096,), float(i)))


def test_a_kernel_keeping_memory_it_was_lent_raises_and_is_never_lent_again(keeping_ops):
    ops, cache = keeping_ops
    op = ops["keep_one"]
    x = torch.arange(4096, dtype=torch.float32)
    # The first run keeps its second buffer and returns its first: the next run is lent the output's memory for
    # its first buffer, and keeps it. Only an output alive when its kernel starts is lent, so the test keeps it.
    assert_same(op(x.to("openreg")), x * 2, **EXACT)
    outputs = []
    with pytest.raises(RuntimeError, match="kept a buffer past its return in memory openreg had lent"):
        outputs.append(op(x.to("openreg")))
        torch.openreg.synchronize()
    outputs.clear()
    for _ in range(3):
        assert_same(op(x.to("openreg")), x * 2, **EXACT)
    # Frees the kept buffers, the lent one included, which kept its output's memory from being handed out again.
    cache.clear()
    _assert_fresh_memory_is_intact()


def test_a_kernel_keeping_memory_lent_from_a_dropped_output_is_reported_and_later_work_is_right(keeping_ops):
    """An output dropped at once may be freed before its kernel runs (on an asynchronous driver): its memory then
    serves work enqueued later, and is handed out again while the kernel's kept buffer shares it. The kernel is
    reported, and nothing else goes wrong: later kernels allocate and lend that memory, and freeing the kept buffer
    frees nobody else's."""
    ops, cache = keeping_ops
    op = ops["keep_one_dropped"]
    x = torch.arange(4096, dtype=torch.float32)
    assert_same(op(x.to("openreg")), x * 2, **EXACT)  # learns which allocation becomes the result
    device_x = x.to("openreg")
    # Keeps the stream busy while the host drops every output, on an asynchronous driver.
    slow = torch.ones(1500, 1500, device="openreg")
    slow @ slow
    reported = []
    for call in [lambda: op(device_x)] * 4 + [torch.openreg.synchronize]:
        try:
            call()
        except RuntimeError as error:
            reported.append(str(error))
    assert len(reported) == 1 and "kept a buffer past its return in memory openreg had lent" in reported[0]
    # The kept buffer's memory is settled and free (or taken by a later output): kernels allocating memory of its
    # size inside their work, and ops lending their outputs, run on it.
    for _ in range(3):
        assert_same(op(device_x), x * 2, **EXACT)
        assert_same(device_x.median(), x.median(), **EXACT)
        assert_same(F.conv1d(device_x.view(1, 1, -1), torch.ones(1, 1, 1, device="openreg")), x.view(1, 1, -1))
    cache.clear()
    for _ in range(3):
        assert_same(device_x.median(), x.median(), **EXACT)
    _assert_fresh_memory_is_intact()
