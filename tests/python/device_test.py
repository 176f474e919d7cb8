"""The device exists after `import torch` alone and behaves like torch.cuda."""

import os

import pytest
import torch

from openreg_testing import run_python

DRIVER = os.environ["OPENREG_DRIVER"]


def test_import_torch_alone_registers_the_backend():
    result = run_python(
        """
        import sys, torch
        assert "torch_openreg" in sys.modules, "the entry point did not load the backend"
        x = torch.ones(2, device="openreg")
        print(x.device, x.is_openreg, torch.openreg.device_count(), torch._C._get_privateuse1_backend_name())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["openreg:0", "True", "2", "openreg"]


def test_importing_the_package_first_works():
    # `import torch_openreg` before torch, as PyTorch's own OpenReg example
    # teaches: torch then autoloads this half-imported package.
    result = run_python(
        """
        import torch_openreg
        import torch
        print(torch.ones(2, device="openreg").sum().item(), torch.openreg.device_count())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2.0", "2"]


def test_the_tested_package_and_its_entry_point_come_from_this_build():
    # An installed torch_openreg in the venv must not stand in for the build
    # under test.
    import importlib.metadata

    import torch_openreg

    package_root = os.path.dirname(os.path.dirname(os.path.abspath(torch_openreg.__file__)))
    distribution = importlib.metadata.distribution("torch_openreg")
    assert os.path.abspath(str(distribution.locate_file(""))) == package_root
    assert "site-packages" not in package_root
    (entry_point,) = [e for e in distribution.entry_points if e.group == "torch.backends"]
    assert (entry_point.name, entry_point.value) == ("openreg", "torch_openreg:_autoload")


def test_initialization_is_lazy():
    result = run_python("import torch; print(torch.openreg.is_initialized())")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_driver_info_names_the_selected_driver():
    info = torch.openreg.driver_info()
    assert info.name == DRIVER
    assert info.abi_version == "2.2"  # both shipped drivers implement ABI 2.2
    assert info.path.endswith(f"libopenreg_{DRIVER}.so")
    assert info.version


def test_default_device_count_is_two():
    assert torch.openreg.is_available()
    assert torch.openreg.device_count() == 2


def test_device_count_from_environment():
    result = run_python("import torch; print(torch.openreg.device_count())", env={"OPENREG_DEVICE_COUNT": "4"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "4"


def test_set_device_and_current_device():
    torch.openreg.set_device(1)
    try:
        assert torch.openreg.current_device() == 1
        assert torch.empty(1, device="openreg").device == torch.device("openreg:1")
    finally:
        torch.openreg.set_device(0)
    assert torch.openreg.current_device() == 0


def test_device_context_manager_restores_on_exception():
    with pytest.raises(KeyError):
        with torch.openreg.device(1):
            assert torch.openreg.current_device() == 1
            raise KeyError("boom")
    assert torch.openreg.current_device() == 0
    with torch.openreg.device(None):
        assert torch.openreg.current_device() == 0
    with torch.openreg.device("openreg:1"):
        assert torch.openreg.current_device() == 1


@pytest.mark.parametrize("index", [2, 7, -2])
def test_out_of_range_device_index_says_what_is_valid(index):
    with pytest.raises(RuntimeError, match=r"valid indices are 0 to 1"):
        torch.openreg.set_device(index)
    with pytest.raises(RuntimeError, match=r"valid indices are 0 to 1"):
        torch.empty(1, device=f"openreg:{abs(index)}" if index > 1 else "openreg:9")
    # The process keeps working.
    assert torch.ones(1, device="openreg").cpu().item() == 1.0


def test_wrong_device_type_is_rejected():
    with pytest.raises(ValueError, match="expected an openreg device"):
        torch.openreg.set_device("cpu")


def test_synchronize():
    x = torch.ones(3, device="openreg:1") * 2
    torch.openreg.synchronize(1)
    torch.openreg.synchronize()
    assert x.sum().item() == 6.0


def test_device_properties():
    properties = torch.openreg.get_device_properties(0)
    assert DRIVER in properties.name
    assert properties.total_memory > 0
    assert torch.openreg.get_device_name("openreg:1") == properties.name


def test_seeding_is_reproducible():
    torch.manual_seed(1234)
    first = torch.randn(100, device="openreg")
    torch.manual_seed(1234)
    second = torch.randn(100, device="openreg")
    assert torch.equal(first.cpu(), second.cpu())
    assert first.std().item() == pytest.approx(1.0, abs=0.3)
    torch.openreg.manual_seed_all(7)
    assert torch.openreg.initial_seed() == 7


RANDOM_PROGRAM = """
import torch
torch.manual_seed(42)
x = torch.randn(1000, device="openreg")
y = torch.nn.functional.dropout(torch.ones(1000, device="openreg"), p=0.5)
z = torch.randint(0, 100, (50,), device="openreg:1")
print(float(x.sum()), int(y.count_nonzero()), z.tolist())
"""


def test_random_numbers_do_not_depend_on_the_driver():
    # Random ops draw from the device generator when enqueued, not when they
    # run, so every driver gives the same numbers.
    outputs = set()
    for driver in ("cpu_sim", DRIVER):
        result = run_python(RANDOM_PROGRAM, env={"OPENREG_DRIVER": driver})
        assert result.returncode == 0, result.stderr
        outputs.add(result.stdout)
    assert len(outputs) == 1, outputs


def test_rng_state_round_trip():
    state = torch.openreg.get_rng_state()
    a = torch.rand(10, device="openreg")
    torch.openreg.set_rng_state(state)
    b = torch.rand(10, device="openreg")
    assert torch.equal(a.cpu(), b.cpu())


def test_explicit_generator_and_cpu_generator_rejected():
    x = torch.empty(5, device="openreg").uniform_(generator=torch.Generator(device="openreg").manual_seed(3))
    y = torch.empty(5, device="openreg").uniform_(generator=torch.Generator(device="openreg").manual_seed(3))
    assert torch.equal(x.cpu(), y.cpu())
    with pytest.raises(RuntimeError, match="needs an openreg generator"):
        torch.empty(5, device="openreg").uniform_(generator=torch.Generator())


def test_module_methods_are_generated():
    module = torch.nn.Linear(2, 2).openreg()
    assert module.weight.is_openreg
    storage = torch.ones(2, device="openreg").untyped_storage()
    assert storage.is_openreg


def test_stream_without_an_index_is_on_the_current_device():
    with torch.openreg.device(1):
        stream = torch.Stream(device="openreg")
    assert stream.device == torch.device("openreg:1")
    assert stream != torch.Stream(device="openreg:1")
    with stream:
        assert torch.accelerator.current_stream(1) == stream


def test_device_of_follows_the_tensor():
    with torch.openreg.device_of(torch.ones(1, device="openreg:1")):
        assert torch.openreg.current_device() == 1
    assert torch.openreg.current_device() == 0
    with torch.openreg.device_of(torch.ones(1)):  # a CPU tensor changes nothing
        assert torch.openreg.current_device() == 0


def test_default_generators_are_the_per_device_generators():
    generators = torch.openreg.default_generators
    assert [g.device for g in generators] == [torch.device("openreg:0"), torch.device("openreg:1")]
    generators[1].manual_seed(5)
    assert torch.openreg.get_rng_state(1).equal(generators[1].get_state())
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'"):
        torch.openreg.no_such_thing


def test_precision_support_flags():
    assert torch.openreg.is_bf16_supported()
    assert not torch.openreg.is_tf32_supported()
