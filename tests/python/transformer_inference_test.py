"""nn.MultiheadAttention and nn.TransformerEncoder in inference on openreg.

In evaluation mode under torch.no_grad(), PyTorch takes fast paths it opens to
the PrivateUse1 device as to CUDA: torch._native_multi_head_attention, and,
for an encoder given a padding mask, nested tensors
(torch._nested_tensor_from_mask, then each layer on the nested tensor, then
to_padded_tensor). A validation loop runs exactly these; each must give the
CPU's result.
"""

import pytest
import torch
from torch import nn

WIDTH, HEADS = 32, 4


def seeded(module):
    torch.manual_seed(0)
    return module().eval()


def inputs(batch=3, length=10):
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(batch, length, WIDTH, generator=generator)
    padding = torch.zeros(batch, length, dtype=torch.bool)
    padding[1, 7:] = True
    padding[2, 4:] = True
    return x, padding


def on(device, module, *tensors):
    return module.to(device), [t.to(device) for t in tensors]


def assert_matches_cpu(device_result, cpu_result):
    if cpu_result is None:
        assert device_result is None
        return
    assert device_result.device.type == "openreg"
    torch.testing.assert_close(device_result.cpu(), cpu_result, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("masked", [False, True])
def test_multihead_attention_fast_path_matches_cpu(need_weights, average, masked):
    x, padding = inputs()
    attention = seeded(lambda: nn.MultiheadAttention(WIDTH, HEADS, batch_first=True))
    mask = padding if masked else None
    results = {}
    with torch.no_grad():
        for device in ("cpu", "openreg"):
            module, (query,) = on(device, attention, x)
            results[device] = module(query, query, query, key_padding_mask=None if mask is None else mask.to(device),
                                     need_weights=need_weights, average_attn_weights=average)
    for device_result, cpu_result in zip(results["openreg"], results["cpu"]):
        assert_matches_cpu(device_result, cpu_result)


def test_native_multi_head_attention_without_weights_returns_none():
    attention = seeded(lambda: nn.MultiheadAttention(WIDTH, HEADS, batch_first=True))
    for query in (inputs()[0], torch.empty(0, 10, WIDTH)):
        results = {}
        for device in ("cpu", "openreg"):
            module, (q,) = on(device, attention, query)
            for need_weights in (False, True):
                results[device, need_weights] = torch._native_multi_head_attention(
                    q, q, q, WIDTH, HEADS, module.in_proj_weight, module.in_proj_bias,
                    module.out_proj.weight, module.out_proj.bias, None, need_weights)
        for need_weights in (False, True):
            cpu_output, cpu_weights = results["cpu", need_weights]
            device_output, device_weights = results["openreg", need_weights]
            assert_matches_cpu(device_output.detach(), cpu_output.detach())
            assert (device_weights is None) == (cpu_weights is None)


@pytest.mark.parametrize("masked", [False, True])
def test_encoder_layer_fast_path_matches_cpu(masked):
    x, padding = inputs()
    layer = seeded(lambda: nn.TransformerEncoderLayer(WIDTH, HEADS, 64, batch_first=True))
    results = {}
    with torch.no_grad():
        for device in ("cpu", "openreg"):
            module, (src, mask) = on(device, layer, x, padding)
            results[device] = module(src, src_key_padding_mask=mask if masked else None)
    assert_matches_cpu(results["openreg"], results["cpu"])


@pytest.mark.parametrize("mask_check", [True, False])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_with_padding_mask_runs_on_nested_tensors_as_on_cpu(mask_check, activation):
    x, padding = inputs()
    encoder = seeded(lambda: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(WIDTH, HEADS, 64, activation=activation, batch_first=True),
        2, enable_nested_tensor=True, mask_check=mask_check))
    results = {}
    with torch.no_grad():
        for device in ("cpu", "openreg"):
            module, (src, mask) = on(device, encoder, x, padding)
            results[device] = module(src, src_key_padding_mask=mask)
    assert results["cpu"].shape == x.shape
    assert_matches_cpu(results["openreg"], results["cpu"])


def test_encoder_takes_the_nested_path_on_openreg():
    x, padding = inputs()
    encoder = seeded(lambda: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(WIDTH, HEADS, 64, batch_first=True), 2))
    module, (src, mask) = on("openreg", encoder, x, padding)
    with torch.no_grad(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        module(src, src_key_padding_mask=mask)
        torch.openreg.synchronize()
    names = {event.name for event in profile.events()}
    assert "aten::_nested_tensor_from_mask" in names
    assert "aten::to_padded_tensor" in names


def test_training_and_evaluation_agree():
    """A training step, then the validation pass a loop runs after it."""
    x, padding = inputs()

    def make():
        return nn.TransformerEncoder(
            nn.TransformerEncoderLayer(WIDTH, HEADS, 64, dropout=0.0, batch_first=True), 2)

    torch.manual_seed(0)
    weights = make().state_dict()
    results = {}
    for device in ("cpu", "openreg"):
        module = make()
        module.load_state_dict(weights)
        module, (src, mask) = on(device, module, x, padding)
        optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
        module(src, src_key_padding_mask=mask).square().mean().backward()
        optimizer.step()
        module.eval()
        with torch.no_grad():
            results[device] = module(src, src_key_padding_mask=mask)
    assert_matches_cpu(results["openreg"], results["cpu"])
