"""F.scaled_dot_product_attention on openreg (core/aten/attention_ops.cc): where
the CPU runs its fused flash kernel, openreg runs the same kernel as one op
(forward and backward) instead of the math decomposition, with the CPU's
results, gradients and errors; where the CPU would not, it decomposes as
before."""

import pytest
import torch
from torch.nn import functional as F
from torch.profiler import ProfilerActivity, profile

from openreg_testing import assert_same


def randn(shape, dtype=torch.float32, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def tolerances(dtype):
    if dtype in (torch.float16, torch.bfloat16):
        return {"atol": 2e-2, "rtol": 2e-2}
    return {}


def forward_and_backward(device, query, key, value, **keywords):
    """The attention's output and the gradients of its three inputs."""
    leaves = [t.detach().to(device).requires_grad_() for t in (query, key, value)]
    out = F.scaled_dot_product_attention(*leaves, **keywords)
    out.backward(torch.ones_like(out))
    return [out.detach()] + [t.grad for t in leaves]


def ops_run(function):
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        function()
        torch.openreg.synchronize()
    return {event.key for event in prof.key_averages()}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("lengths", [(16, 16), (7, 12), (33, 5)], ids=str)
def test_values_and_gradients_match_cpu(lengths, causal, dtype):
    query_length, key_length = lengths
    query = randn((2, 3, query_length, 8), dtype, seed=1)
    key = randn((2, 3, key_length, 8), dtype, seed=2)
    value = randn((2, 3, key_length, 8), dtype, seed=3)
    cpu = forward_and_backward("cpu", query, key, value, is_causal=causal)
    device = forward_and_backward("openreg", query, key, value, is_causal=causal)
    for device_result, cpu_result in zip(device, cpu):
        assert_same(device_result, cpu_result, **tolerances(dtype))


@pytest.mark.parametrize("mask_dtype", [torch.float32, torch.bool], ids=str)
def test_masks_and_scale_match_cpu(mask_dtype):
    query, key, value = (randn((2, 4, 10, 16), seed=seed) for seed in (1, 2, 3))
    mask = randn((10, 10), seed=4)
    mask = mask > 0 if mask_dtype == torch.bool else mask
    mask[:, 0] = True if mask_dtype == torch.bool else 0.0  # no row fully masked
    cpu = forward_and_backward("cpu", query, key, value, attn_mask=mask, scale=0.3)
    device = forward_and_backward("openreg", query, key, value, attn_mask=mask.openreg(), scale=0.3)
    for device_result, cpu_result in zip(device, cpu):
        assert_same(device_result, cpu_result)


def test_non_contiguous_inputs_match_cpu():
    # The bench model's layout: heads split from one (batch, length, width) projection.
    packed = randn((2, 12, 3 * 32), seed=5)

    def split(t):
        return [part.view(2, 12, 4, 8).transpose(1, 2) for part in t.split(32, dim=2)]

    cpu = forward_and_backward("cpu", *split(packed), is_causal=True)
    device = forward_and_backward("openreg", *split(packed.openreg()), is_causal=True)
    for device_result, cpu_result in zip(device, cpu):
        assert_same(device_result, cpu_result)


def test_fused_kernel_replaces_the_decomposition():
    query, key, value = (randn((2, 4, 16, 8), seed=seed) for seed in (1, 2, 3))
    ops = ops_run(lambda: forward_and_backward("openreg", query, key, value, is_causal=True))
    assert "aten::_scaled_dot_product_fused_attention_overrideable" in ops
    assert "aten::_scaled_dot_product_fused_attention_overrideable_backward" in ops
    assert "aten::_scaled_dot_product_attention_math" not in ops
    assert "aten::bmm" not in ops


def test_dropout_uses_the_decomposition():
    query, key, value = (randn((2, 4, 16, 8), seed=seed) for seed in (1, 2, 3))
    leaves = [t.openreg() for t in (query, key, value)]
    outputs = []
    ops = ops_run(lambda: outputs.append(F.scaled_dot_product_attention(*leaves, dropout_p=0.5)))
    assert "aten::_scaled_dot_product_attention_math" in ops
    assert "aten::_scaled_dot_product_fused_attention_overrideable" not in ops
    assert outputs[0].shape == query.shape


def test_mask_that_needs_a_gradient_gets_the_cpus_gradient():
    query, key, value = (randn((1, 2, 6, 4), seed=seed) for seed in (1, 2, 3))
    mask = randn((6, 6), seed=4)
    gradients = []
    for device in ("cpu", "openreg"):
        leaf = mask.detach().to(device).requires_grad_()
        out = F.scaled_dot_product_attention(query.to(device), key.to(device), value.to(device), attn_mask=leaf)
        out.sum().backward()
        gradients.append(leaf.grad)
    assert_same(gradients[1], gradients[0])


@pytest.mark.parametrize("shapes", [
    ((2, 3, 5, 8), (2, 3, 5, 4), (2, 3, 5, 8)),  # query and key widths differ
    ((2, 3, 5, 8), (2, 2, 5, 8), (2, 2, 5, 8)),  # head counts differ
], ids=["widths", "heads"])
def test_bad_shapes_raise_the_cpus_error(shapes):
    tensors = [randn(shape, seed=seed) for seed, shape in enumerate(shapes)]
    with pytest.raises(RuntimeError) as cpu_error:
        F.scaled_dot_product_attention(*tensors)
    with pytest.raises(RuntimeError) as device_error:
        F.scaled_dot_product_attention(*[t.openreg() for t in tensors])
        torch.openreg.synchronize()
    assert str(cpu_error.value).split("\n")[0] in str(device_error.value)
    # The process keeps working.
    test_fused_kernel_replaces_the_decomposition()


@pytest.mark.parametrize("layout", ["contiguous", "split heads"])
def test_results_have_the_meta_functions_layout(layout):
    # Compiled graphs size the fused op's results with its meta function and
    # check the strides of what the kernel returns.
    if layout == "contiguous":
        query, key, value = (randn((2, 4, 12, 8), seed=seed).openreg() for seed in (1, 2, 3))
    else:
        packed = randn((2, 12, 3 * 32), seed=5).openreg()
        query, key, value = (part.view(2, 12, 4, 8).transpose(1, 2) for part in packed.split(32, dim=2))
    fused = torch.ops.aten._scaled_dot_product_fused_attention_overrideable
    results = fused(query, key, value, is_causal=True)
    expected = fused(query.to("meta"), key.to("meta"), value.to("meta"), is_causal=True)
    for result, meta in zip(results, expected):
        if isinstance(meta, torch.Tensor):
            assert result.shape == meta.shape and result.stride() == meta.stride()
    reference = F.scaled_dot_product_attention(query.cpu(), key.cpu(), value.cpu(), is_causal=True)
    assert_same(results[0], reference)
    backward = torch.ops.aten._scaled_dot_product_fused_attention_overrideable_backward

    def gradients(device):
        def on(t):
            return t.to(device) if isinstance(t, torch.Tensor) else t

        out, logsumexp = results[0], results[1]
        return backward(on(torch.ones_like(out)), on(query), on(key), on(value), None, [True, True, True, False],
                        on(out), on(logsumexp), None, None, results[4], results[5], 0.0, True, on(results[6]),
                        on(results[7]))

    for gradient, meta in zip(gradients("openreg")[:3], gradients("meta")[:3]):
        assert gradient.shape == meta.shape and gradient.stride() == meta.stride()
