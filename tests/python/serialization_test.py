"""torch.save / torch.load of openreg tensors, modules and optimizers."""

import io

import pytest
import torch


def round_trip(obj, **load_kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **load_kwargs)


def test_tensor_round_trip_keeps_device_and_values():
    x = torch.randn(3, 4, device="openreg:1")
    loaded = round_trip(x)
    assert loaded.device == torch.device("openreg:1")
    assert torch.equal(loaded.cpu(), x.cpu())


def test_storages_report_their_openreg_location():
    assert torch.serialization.location_tag(torch.ones(1, device="openreg").untyped_storage()) == "openreg:0"
    assert torch.serialization.location_tag(torch.ones(1, device="openreg:1").untyped_storage()) == "openreg:1"


@pytest.mark.parametrize(
    "map_location, expected",
    [("cpu", "cpu"), ("openreg:1", "openreg:1"), (torch.device("openreg:0"), "openreg:0"), ({"openreg:1": "openreg:0"}, "openreg:0")],
)
def test_map_location(map_location, expected):
    x = torch.arange(6.0, device="openreg:1").view(2, 3)
    loaded = round_trip(x, map_location=map_location)
    assert loaded.device == torch.device(expected)
    assert torch.equal(loaded.cpu(), x.cpu())


def test_cpu_tensors_load_onto_openreg():
    loaded = round_trip(torch.arange(4), map_location="openreg:1")
    assert loaded.device == torch.device("openreg:1")
    assert loaded.tolist() == [0, 1, 2, 3]


def test_views_share_storage_after_loading():
    base = torch.arange(10.0, device="openreg")
    loaded_base, loaded_view = round_trip([base, base[2:5]])
    loaded_view.fill_(-1)
    assert loaded_base[2:5].tolist() == [-1, -1, -1]


def test_state_dict_round_trip():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 2)).to("openreg")
    model(torch.randn(5, 4, device="openreg"))  # moves the BatchNorm running stats
    state = round_trip(model.state_dict())
    fresh = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 2)).to("openreg")
    fresh.load_state_dict(state)
    for name, value in model.state_dict().items():
        assert state[name].device.type == "openreg", name
        assert torch.equal(fresh.state_dict()[name].cpu(), value.cpu()), name


def test_optimizer_state_round_trip():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 3).to("openreg")
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        model(torch.randn(4, 3, device="openreg")).pow(2).sum().backward()
        optimizer.step()
    saved = round_trip({"model": model.state_dict(), "optimizer": optimizer.state_dict()})
    restored_model = torch.nn.Linear(3, 3).to("openreg")
    restored_model.load_state_dict(saved["model"])
    restored = torch.optim.Adam(restored_model.parameters(), lr=0.1)
    restored.load_state_dict(saved["optimizer"])
    for state in restored.state.values():
        assert state["exp_avg"].device.type == "openreg"
    # Both continue identically.
    batch = torch.randn(4, 3, device="openreg")
    for m, opt in ((model, optimizer), (restored_model, restored)):
        opt.zero_grad()
        m(batch).pow(2).sum().backward()
        opt.step()
    assert torch.equal(model.weight.cpu(), restored_model.weight.cpu())


def test_weights_only_load():
    x = torch.ones(2, device="openreg")
    loaded = round_trip({"x": x}, weights_only=True)
    assert loaded["x"].device == torch.device("openreg:0")


def test_backend_flags_survive_a_round_trip():
    from torch_openreg import _C

    x = torch.ones(4, device="openreg:1")
    _C._set_backend_flags(x, {"channels_packed": True, "calibrated": False})
    loaded = round_trip(x)
    assert _C._get_backend_flags(loaded) == {"channels_packed": True, "calibrated": False}
    assert _C._get_backend_flags(round_trip(x, map_location="openreg:0")) == {"channels_packed": True, "calibrated": False}
    assert _C._get_backend_flags(torch.ones(1, device="openreg")) == {}
    # The flags belong to the tensor object: detach() copies them, a fresh result has none.
    assert _C._get_backend_flags(x.detach()) == {"channels_packed": True, "calibrated": False}
    assert _C._get_backend_flags(x + 1) == {}


def test_backend_flags_reject_bad_input():
    from torch_openreg import _C

    with pytest.raises(ValueError, match="only be attached to openreg tensors"):
        _C._set_backend_flags(torch.ones(1), {"a": True})
    with pytest.raises(ValueError, match="non-empty"):
        _C._set_backend_flags(torch.ones(1, device="openreg"), {"": True})
