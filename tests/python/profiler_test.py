"""torch.profiler and the legacy profiler on openreg (docs/profiling.md).

Device activity comes from the driver's activity-recording group (ABI 2.2),
which both shipped drivers implement; the minimal driver lacks it and must
still profile its CPU side, with one warning naming the missing feature.
"""

import glob
import json
import os
import warnings

import pytest
import torch
import torch_openreg  # noqa: F401
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

from openreg_testing import run_python

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]
DRIVER = os.environ.get("OPENREG_DRIVER", "cpu_sim")


def _device_events(prof):
    return [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]


def _trace(prof, tmp_path):
    path = str(tmp_path / "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        return json.load(f)["traceEvents"]


def _kernels(trace):
    return [e for e in trace if e.get("ph") == "X" and e.get("cat") == "kernel"]


def test_device_events_have_times_and_device_time_per_op():
    x = torch.randn(256, device="openreg")
    torch.openreg.synchronize()
    with profile(activities=ACTIVITIES) as prof:
        y = x + 1
        z = y * 2
        torch.openreg.synchronize()
    del z
    device_events = _device_events(prof)
    assert device_events, [e.name for e in prof.events()]
    for event in device_events:
        assert event.time_range.end >= event.time_range.start
    averages = {row.key: row for row in prof.key_averages()}
    assert averages["aten::add"].device_time_total > 0
    assert averages["aten::mul"].device_time_total > 0


def test_copies_are_device_events_with_their_direction():
    host = torch.randn(1024)
    with profile(activities=ACTIVITIES) as prof:
        on_device = host.to("openreg")
        back = on_device.cpu()
    assert torch.equal(back, host)
    names = {e.name for e in _device_events(prof)}
    assert "Memcpy HtoD (openreg)" in names, names
    assert "Memcpy DtoH (openreg)" in names, names


def test_trace_has_a_row_per_stream_and_arrows_from_the_launching_op(tmp_path):
    a = torch.randn(64, 64, device="openreg")
    side = torch.openreg.Stream()
    torch.openreg.synchronize()
    with profile(activities=ACTIVITIES) as prof:
        a @ a
        with torch.openreg.stream(side):
            a @ a
        torch.openreg.synchronize()
    trace = _trace(prof, tmp_path)
    kernels = _kernels(trace)
    streams = {kernel["args"]["stream"] for kernel in kernels}
    assert {0, side.stream_id} <= streams, kernels
    rows = {(kernel["pid"], kernel["tid"]) for kernel in kernels}
    assert len(rows) >= 2, rows
    thread_names = {
        (e["pid"], e["tid"]): e["args"]["name"] for e in trace if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    assert any("openreg stream" in thread_names.get(row, "") for row in rows), thread_names
    # Each kernel ends an arrow that starts at its launching operation.
    starts = {e["id"] for e in trace if e.get("ph") == "s"}
    ends = {e["id"] for e in trace if e.get("ph") == "f"}
    assert starts and starts & ends, (starts, ends)


def test_each_kernel_is_correlated_with_the_op_that_launched_it():
    x = torch.randn(128, device="openreg")
    torch.openreg.synchronize()
    with profile(activities=ACTIVITIES) as prof:
        torch.sin(x)
        torch.cos(x)
        torch.openreg.synchronize()
    launched = {}
    for event in prof.events():
        for kernel in event.kernels:
            launched.setdefault(event.name, []).append(kernel.name)
    assert "aten::sin" in launched and "aten::cos" in launched, launched
    assert all(name == "aten::sin" for name in launched["aten::sin"]), launched


@pytest.mark.skipif(DRIVER != "threaded_sim", reason="cpu_sim runs every item on the launching thread, one at a time")
def test_two_streams_overlap_on_threaded_sim(tmp_path):
    a = torch.randn(384, 384, device="openreg")
    streams = [torch.openreg.Stream(), torch.openreg.Stream()]
    torch.openreg.synchronize()
    with profile(activities=ACTIVITIES) as prof:
        for _ in range(4):
            for stream in streams:
                with torch.openreg.stream(stream):
                    a @ a
        torch.openreg.synchronize()
    kernels = _kernels(_trace(prof, tmp_path))
    by_stream = {}
    for kernel in kernels:
        by_stream.setdefault(kernel["args"]["stream"], []).append((kernel["ts"], kernel["ts"] + kernel["dur"]))
    first, second = (by_stream[s.stream_id] for s in streams)
    overlaps = [(a0, a1, b0, b1) for a0, a1 in first for b0, b1 in second if a0 < b1 and b0 < a1]
    assert overlaps, by_stream


def test_schedule_and_tensorboard_trace_handler(tmp_path):
    x = torch.randn(64, device="openreg")
    with profile(
        activities=ACTIVITIES,
        schedule=schedule(wait=1, warmup=1, active=2),
        on_trace_ready=tensorboard_trace_handler(str(tmp_path)),
    ) as prof:
        for _ in range(4):
            x = x + 1
            torch.openreg.synchronize()
            prof.step()
    files = glob.glob(str(tmp_path / "*.pt.trace.json"))
    assert len(files) == 1, files
    with open(files[0]) as f:
        trace = json.load(f)["traceEvents"]
    # Two active steps of one add each.
    assert len([k for k in _kernels(trace) if k["name"] == "aten::add"]) == 2


def test_cpu_only_profiling_records_no_device_activity():
    x = torch.randn(64, device="openreg")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        x + 1
        torch.openreg.synchronize()
    assert not _device_events(prof)
    assert any(e.name == "aten::add" for e in prof.events())


def test_legacy_profiler_times_ops_without_warnings(capfd):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.profiler.profile(use_device="openreg") as p:
            torch.randn(9, device="openreg") + 1
    assert not [w for w in caught if "not enabled" in str(w.message)], [str(w.message) for w in caught]
    # PyTorch's placeholder methods log it through c10, to stderr.
    assert "not enabled" not in capfd.readouterr().err
    assert min(e.cpu_time_total for e in p.key_averages()) >= 0


MINIMAL_DRIVER_PROGRAM = """
import warnings
import torch
import torch_openreg
from torch.profiler import ProfilerActivity, profile

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
            torch.randn(8, device="openreg") + 1
            torch.openreg.synchronize()
names = {e.name for e in prof.events()}
device = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]
missing = [str(w.message) for w in caught if "activity-recording" in str(w.message)]
print("aten::add" in names, len(device), len(missing))
print(missing[0] if missing else "")
"""


MINIMAL_DRIVER = os.path.abspath("examples/minimal_driver/libopenreg_minimal.so")


def test_the_minimal_driver_profiles_its_cpu_side_with_one_python_warning():
    result = run_python(MINIMAL_DRIVER_PROGRAM, env={"OPENREG_DRIVER": MINIMAL_DRIVER})
    assert result.returncode == 0, result.stderr
    summary, message = result.stdout.splitlines()[:2]
    assert summary.split() == ["True", "0", "1"], (result.stdout, result.stderr)
    assert "'minimal'" in message and "activity_enable" in message, message
    # A Python warning, not c10's stderr log as well.
    assert "activity-recording" not in result.stderr, result.stderr


WARNINGS_AS_ERRORS_PROGRAM = """
import warnings
import torch
import torch_openreg
from torch.profiler import ProfilerActivity, profile

warnings.simplefilter("error")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
    torch.randn(8, device="openreg") + 1
print(any(e.name == "aten::add" for e in prof.events()))
"""


def test_the_minimal_driver_warning_as_an_error_does_not_break_profiling():
    # Kineto's configure cannot pass an exception back to Python: the warning,
    # raised as an error, is reported as unraisable and profiling goes on.
    result = run_python(WARNINGS_AS_ERRORS_PROGRAM, env={"OPENREG_DRIVER": MINIMAL_DRIVER})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True"], (result.stdout, result.stderr)
    assert "UserWarning" in result.stderr and "activity_enable" in result.stderr, result.stderr
