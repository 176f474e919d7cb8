"""Each OPENREG_* variable is validated with an error that says what is valid,
and the process keeps working after the error."""

import os

import pytest

from openreg_testing import run_python

DRIVER = os.environ["OPENREG_DRIVER"]

USE_DEVICE = """
import torch
try:
    torch.ones(1, device="openreg")
except Exception as error:
    print(type(error).__name__ + ": " + str(error).splitlines()[0])
assert not torch.openreg.is_available()
assert torch.ones(2).sum().item() == 2.0  # the process still works
print("still working")
"""


def run_with(env):
    result = run_python(USE_DEVICE, env=env)
    assert result.returncode == 0, result.stderr
    assert "still working" in result.stdout
    return result.stdout


@pytest.mark.parametrize("value", ["0", "-1", "65", "two", "1.5", ""])
def test_invalid_device_count(value):
    out = run_with({"OPENREG_DEVICE_COUNT": value})
    assert f"OPENREG_DEVICE_COUNT='{value}' is not valid" in out
    assert "an integer from 1 to 64" in out


@pytest.mark.parametrize("value", ["0", "lots", "-5GiB", "2 parsecs"])
def test_invalid_device_memory(value):
    out = run_with({"OPENREG_DEVICE_MEMORY": value})
    assert f"OPENREG_DEVICE_MEMORY='{value}' is not valid" in out
    assert "2GiB" in out


def test_unknown_driver_lists_available_drivers():
    out = run_with({"OPENREG_DRIVER": "warp_drive"})
    assert "OPENREG_DRIVER='warp_drive' is not a driver that was found" in out
    assert "Available drivers:" in out and "cpu_sim" in out


def test_missing_absolute_driver_path():
    out = run_with({"OPENREG_DRIVER": "/nonexistent/libopenreg_x.so"})
    assert "does not exist or cannot be read" in out


def test_relative_driver_path_is_rejected():
    out = run_with({"OPENREG_DRIVER": "some/relative/libdriver.so"})
    assert "looks like a relative path" in out


def test_relative_driver_search_path_is_rejected():
    out = run_with({"OPENREG_DRIVER_PATH": "relative/dir"})
    assert "OPENREG_DRIVER_PATH='relative/dir' is not valid" in out
    assert "absolute directories" in out


def test_driver_found_through_driver_path(tmp_path):
    import torch_openreg

    bundled = os.path.join(os.path.dirname(torch_openreg.__file__), "lib", f"libopenreg_{DRIVER}.so")
    os.symlink(bundled, tmp_path / "libopenreg_renamed.so")
    result = run_python(
        "import torch; print(torch.openreg.driver_info().name)",
        env={"OPENREG_DRIVER": "renamed", "OPENREG_DRIVER_PATH": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == DRIVER


def test_valid_memory_size_sets_capacity():
    result = run_python(
        "import torch; print(torch.openreg.get_device_properties(0).total_memory)",
        env={"OPENREG_DEVICE_MEMORY": "256MiB"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(256 * 2**20)
