"""The names and methods PyTorch generates for a renamed PrivateUse1 backend."""

import torch
import torch.utils.dlpack


def test_backend_name():
    assert torch._C._get_privateuse1_backend_name() == "openreg"
    assert torch.device("openreg:1").type == "openreg"
    assert torch.get_device_module("openreg") is torch.openreg


def test_tensor_methods():
    x = torch.arange(6.0).view(2, 3)
    on_device = x.openreg()
    assert on_device.is_openreg and not x.is_openreg
    assert on_device.device == torch.device("openreg:0")
    assert x.openreg(1).device == torch.device("openreg:1")
    assert x.openreg("openreg:1", non_blocking=True).device == torch.device("openreg:1")
    assert torch.equal(on_device.cpu(), x)


def test_module_and_storage_methods():
    module = torch.nn.Linear(2, 2).openreg(1)
    assert module.weight.device == torch.device("openreg:1")
    storage = torch.arange(4.0).untyped_storage().openreg()
    assert storage.is_openreg and storage.device == torch.device("openreg:0")
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.ones(3, 2, 1), [3, 2]).openreg()
    assert packed.is_openreg


def test_legacy_type_strings():
    x = torch.ones(2, device="openreg")
    assert x.type() == "torch.openreg.FloatTensor"
    assert x.long().type() == "torch.openreg.LongTensor"
    converted = x.type("torch.openreg.DoubleTensor")
    assert converted.dtype == torch.float64 and converted.is_openreg


def test_device_type_and_profiler_activity_names():
    assert str(torch._C._autograd.DeviceType.PrivateUse1) == "DeviceType.OPENREG"
    assert torch.profiler.ProfilerActivity.PrivateUse1.name == "OPENREG"


def test_dlpack_capsule_round_trip_shares_memory():
    x = torch.arange(8.0, device="openreg:1")
    capsule = torch.utils.dlpack.to_dlpack(x)
    y = torch.utils.dlpack.from_dlpack(capsule)
    assert y.device == torch.device("openreg:1")
    assert y.data_ptr() == x.data_ptr()
    y.add_(1)
    assert x.tolist() == [float(i + 1) for i in range(8)]
