"""torch.accelerator's device and stream functions with openreg as the accelerator."""

import pytest
import torch


def test_openreg_is_the_current_accelerator():
    assert torch.accelerator.current_accelerator() == torch.device("openreg")
    assert torch.accelerator.is_available()
    assert torch.accelerator.device_count() == 2


def test_current_and_set_device_index():
    assert torch.accelerator.current_device_index() == 0
    torch.accelerator.set_device_index(1)
    try:
        assert torch.accelerator.current_device_index() == 1
        assert torch.openreg.current_device() == 1
    finally:
        torch.accelerator.set_device_index(0)


def test_device_index_context_restores_on_exception_and_none_keeps():
    with pytest.raises(KeyError):
        with torch.accelerator.device_index(1):
            assert torch.accelerator.current_device_index() == 1
            raise KeyError("boom")
    assert torch.accelerator.current_device_index() == 0
    with torch.accelerator.device_index(None):
        assert torch.accelerator.current_device_index() == 0


def test_out_of_range_index_says_what_is_valid():
    with pytest.raises(RuntimeError, match="valid indices are 0 to 1"):
        torch.accelerator.set_device_index(5)


def test_current_stream_and_set_stream():
    assert torch.accelerator.current_stream() == torch.openreg.default_stream(0)
    stream = torch.Stream(device="openreg:1")
    torch.accelerator.set_stream(stream)
    try:
        assert torch.accelerator.current_stream(1) == stream
        assert torch.openreg.current_stream(1) == stream
    finally:
        torch.accelerator.set_stream(torch.openreg.default_stream(1))
        torch.accelerator.set_device_index(0)


def test_synchronize():
    x = torch.ones(1000, device="openreg:1").cumsum(0)
    torch.accelerator.synchronize(1)
    torch.accelerator.synchronize()
    assert x[-1].item() == 1000.0


def test_device_capability_lists_dtypes_that_really_work():
    supported = torch.accelerator.get_device_capability("openreg:1")["supported_dtypes"]
    assert {torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.bool, torch.complex64} <= supported
    assert {torch.qint8, torch.quint8, torch.qint32} <= supported
    assert torch.quint4x2 not in supported and torch.bits8 not in supported and torch.int4 not in supported
    quantized = {torch.qint8, torch.quint8, torch.qint32}
    for dtype in supported - quantized:
        x = torch.zeros(3, dtype=dtype, device="openreg")
        assert x.to(torch.float64).to(dtype).cpu().dtype == dtype
    for dtype in quantized:
        q = torch.quantize_per_tensor(torch.ones(3, device="openreg"), 0.5, 1, dtype)
        assert q.dtype == dtype and q.cpu().dequantize().tolist() == [1.0, 1.0, 1.0]


def test_device_capability_checks_the_index():
    with pytest.raises(RuntimeError, match="valid indices are 0 to 1"):
        torch.accelerator.get_device_capability(3)


def test_openreg_device_capability():
    assert torch.openreg.get_device_capability() == (0, 0)
    assert torch.openreg.get_device_capability("openreg:1") == (0, 0)
    with pytest.raises(RuntimeError, match="valid indices are 0 to 1"):
        torch.openreg.get_device_capability(2)
