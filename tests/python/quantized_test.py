"""Quantized tensors on openreg, per tensor and per channel, equal the CPU's.

A quantized openreg tensor is a QTensorImpl over openreg memory of its
integer dtype; its ops run PyTorch's quantized CPU kernels on device memory
(core/aten/layout_fallback.h). PyTorch 2.13 warns that creating quantized
tensors is deprecated; the warning is expected here.
"""

import warnings

import pytest
import torch

from openreg_testing import run_python

warnings.filterwarnings("ignore", message=".*quantized tensor creation.*")
torch.manual_seed(0)

QTYPES = [torch.qint8, torch.quint8, torch.qint32]


def assert_quantized_same(openreg_result, cpu_result):
    assert openreg_result.device.type == "openreg", openreg_result.device
    assert openreg_result.is_quantized and openreg_result.dtype == cpu_result.dtype
    assert openreg_result.qscheme() == cpu_result.qscheme()
    back = openreg_result.cpu()
    assert back.device.type == "cpu" and back.is_quantized
    assert torch.equal(back.int_repr(), cpu_result.int_repr())
    assert torch.equal(openreg_result.int_repr().cpu(), cpu_result.int_repr())
    torch.testing.assert_close(openreg_result.dequantize().cpu(), cpu_result.dequantize(), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", QTYPES)
def test_quantize_per_tensor(dtype):
    x = torch.randn(3, 4) * 4
    cpu = torch.quantize_per_tensor(x, 0.1, 10, dtype)
    device = torch.quantize_per_tensor(x.to("openreg"), 0.1, 10, dtype)
    assert_quantized_same(device, cpu)
    assert device.q_scale() == 0.1 and device.q_zero_point() == 10


@pytest.mark.parametrize("dtype", QTYPES)
@pytest.mark.parametrize("axis", [0, 1])
def test_quantize_per_channel(dtype, axis):
    x = torch.randn(3, 4) * 4
    channels = x.shape[axis]
    scales = torch.rand(channels, dtype=torch.float64) / 10 + 0.01
    zero_points = torch.arange(channels)
    cpu = torch.quantize_per_channel(x, scales, zero_points, axis, dtype)
    device = torch.quantize_per_channel(x.to("openreg"), scales.to("openreg"), zero_points.to("openreg"), axis, dtype)
    assert_quantized_same(device, cpu)
    assert device.q_per_channel_axis() == axis
    assert device.q_per_channel_scales().device.type == "openreg"
    torch.testing.assert_close(device.q_per_channel_scales().cpu(), cpu.q_per_channel_scales())
    assert torch.equal(device.q_per_channel_zero_points().cpu(), cpu.q_per_channel_zero_points())


def test_per_channel_parameters_outlive_their_source():
    # The quantizer keeps its own copy: freeing the scales the user passed
    # must not change the tensor.
    x = torch.randn(2, 3)
    scales = torch.tensor([0.1, 0.2], dtype=torch.float64, device="openreg")
    zero_points = torch.tensor([0, 1], device="openreg")
    q = torch.quantize_per_channel(x.to("openreg"), scales, zero_points, 0, torch.qint8)
    del scales, zero_points
    torch.ones(1000, dtype=torch.float64, device="openreg").fill_(7.0)
    expected = torch.quantize_per_channel(x, torch.tensor([0.1, 0.2], dtype=torch.float64), torch.tensor([0, 1]), 0, torch.qint8)
    assert_quantized_same(q, expected)


@pytest.mark.parametrize("per_channel", [False, True])
def test_moving_to_and_from_the_device(per_channel):
    x = torch.randn(2, 5)
    if per_channel:
        cpu = torch.quantize_per_channel(x, torch.tensor([0.05, 0.1], dtype=torch.float64), torch.tensor([3, -2]), 0, torch.qint8)
    else:
        cpu = torch.quantize_per_tensor(x, 0.05, 3, torch.quint8)
    device = cpu.to("openreg")
    assert_quantized_same(device, cpu)
    assert_quantized_same(device.clone(), cpu)


def test_views_and_copies():
    x = torch.randn(4, 6)
    cpu = torch.quantize_per_tensor(x, 0.1, 0, torch.qint8)
    device = cpu.to("openreg")
    assert_quantized_same(device.t(), cpu.t())
    assert_quantized_same(device[1:3], cpu[1:3])
    assert_quantized_same(device.reshape(6, 4), cpu.reshape(6, 4))
    target = torch.quantize_per_tensor(torch.zeros(4, 6, device="openreg"), 0.1, 0, torch.qint8)
    target.copy_(device)
    assert_quantized_same(target, cpu)


def test_printing():
    q = torch.quantize_per_tensor(torch.tensor([1.0, -0.5], device="openreg"), 0.5, 2, torch.qint8)
    text = repr(q)
    assert "device='openreg:0'" in text and "scale=0.5" in text and "zero_point=2" in text


def test_unsupported_op_gives_a_clear_error_and_the_device_keeps_working():
    q = torch.quantize_per_tensor(torch.randn(4, device="openreg"), 0.1, 0, torch.qint8)
    with pytest.raises(NotImplementedError, match=r"(?s)not supported for quantized tensors on openreg.*dequantize\(\)"):
        torch.cumsum(q, 0)
    assert_quantized_same(q, q.cpu())


def test_launch_blocking_run():
    result = run_python(
        """
        import warnings
        warnings.simplefilter("ignore")
        import torch
        x = torch.randn(3, 4)
        q = torch.quantize_per_tensor(x.to("openreg"), 0.1, 1, torch.qint8)
        assert torch.equal(q.int_repr().cpu(), torch.quantize_per_tensor(x, 0.1, 1, torch.qint8).int_repr())
        assert torch.equal(q.cpu().dequantize(), q.dequantize().cpu())
        print("ok")
        """,
        env={"OPENREG_LAUNCH_BLOCKING": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert "ok" in result.stdout
