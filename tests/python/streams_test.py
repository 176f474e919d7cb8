"""torch.Stream and torch.openreg.Stream on openreg devices, as on CUDA."""

import os

import pytest
import torch

from openreg_testing import run_python

DRIVER = os.environ["OPENREG_DRIVER"]


def test_creation_with_device_and_priority():
    stream = torch.Stream(device="openreg:1", priority=-1)
    assert stream.device == torch.device("openreg:1")
    assert stream.device_index == 1
    assert stream.device_type == 20  # c10::DeviceType::PrivateUse1, as CUDA streams report 1
    assert stream.stream_id != 0


def test_new_streams_differ_from_each_other_and_from_the_default_stream():
    first = torch.Stream(device="openreg:0")
    second = torch.Stream(device="openreg:0")
    default = torch.openreg.default_stream(0)
    assert first != second
    assert first != default and second != default
    assert len({first, second, default}) == 3
    assert default.stream_id == 0


def test_rebuilding_from_fields_gives_an_equal_stream():
    stream = torch.Stream(device="openreg:1")
    rebuilt = torch.Stream(stream_id=stream.stream_id, device_index=stream.device_index, device_type=stream.device_type)
    assert rebuilt == stream
    assert hash(rebuilt) == hash(stream)
    as_openreg = torch.openreg.Stream(
        stream_id=stream.stream_id, device_index=stream.device_index, device_type=stream.device_type
    )
    assert as_openreg == stream


def test_streams_on_different_devices_are_different():
    assert torch.openreg.default_stream(0) != torch.openreg.default_stream(1)


def test_repr():
    stream = torch.Stream(device="openreg:1")
    assert repr(stream) == f"torch.Stream device_type=openreg, device_index=1, stream_id={stream.stream_id}"
    own = torch.openreg.Stream("openreg:1")
    assert repr(own) == f"<torch.openreg.Stream device=openreg:1 stream_id={own.stream_id}>"


def test_openreg_stream_is_a_torch_stream():
    stream = torch.openreg.Stream(priority=-1)
    assert isinstance(stream, torch.Stream)
    assert stream.device == torch.device("openreg:0")
    assert isinstance(torch.openreg.current_stream(), torch.openreg.Stream)
    assert isinstance(torch.openreg.default_stream(1), torch.openreg.Stream)


def test_priority_is_the_one_the_stream_was_created_with():
    # Both shipped drivers implement stream_get_priority (required since driver ABI 2.0).
    assert torch.openreg.Stream(priority=-1).priority == -1
    assert torch.openreg.Stream().priority == 0
    assert torch.openreg.default_stream().priority == 0
    properties = torch.openreg.get_device_properties(1)
    for priority in range(properties.greatest_stream_priority, properties.least_stream_priority + 1):
        stream = torch.openreg.Stream(device=1, priority=priority)
        assert stream.priority == priority
        # A stream rebuilt from its fields names the same driver stream.
        rebuilt = torch.openreg.Stream(stream_id=stream.stream_id, device_index=1, device_type=stream.device_type)
        assert rebuilt.priority == priority


def test_priority_of_an_unknown_stream_is_rejected():
    stream = torch.openreg.Stream(stream_id=10**6, device_index=0, device_type=torch.openreg.Stream().device_type)
    with pytest.raises(ValueError, match="has no stream with id 1000000"):
        stream.priority


def test_unknown_stream_id_is_rejected():
    bogus = torch.Stream(stream_id=10_000, device_index=0, device_type=torch.Stream(device="openreg").device_type)
    with pytest.raises(ValueError, match="stream"):
        torch.openreg.set_stream(bogus)
    assert torch.openreg.current_stream(0).stream_id == 0


def test_set_stream_and_current_stream():
    stream = torch.openreg.Stream("openreg:1")
    try:
        torch.openreg.set_stream(stream)
        assert torch.openreg.current_device() == 1
        assert torch.openreg.current_stream() == stream
        assert torch.openreg.current_stream(0) == torch.openreg.default_stream(0)
        torch.openreg.set_stream(None)
        assert torch.openreg.current_stream(1) == stream
    finally:
        torch.openreg.set_stream(torch.openreg.default_stream(1))
        torch.openreg.set_device(0)


def test_set_stream_rejects_other_devices():
    with pytest.raises(ValueError, match="expected an openreg stream"):
        torch.openreg.set_stream(torch.Stream(device="cpu"))


def test_stream_context_manager_selects_and_restores():
    stream = torch.openreg.Stream("openreg:1")
    with torch.openreg.stream(stream):
        assert torch.openreg.current_device() == 1
        assert torch.openreg.current_stream() == stream
        y = torch.ones(4, device="openreg:1") * 3
    assert torch.openreg.current_device() == 0
    assert torch.openreg.current_stream(1) == torch.openreg.default_stream(1)
    stream.synchronize()
    assert y.sum().item() == 12.0
    with pytest.raises(KeyError):
        with torch.openreg.stream(stream):
            raise KeyError("boom")
    assert torch.openreg.current_stream(1) == torch.openreg.default_stream(1)
    with torch.openreg.stream(None):
        assert torch.openreg.current_stream() == torch.openreg.default_stream(0)


def test_generic_with_stream():
    stream = torch.Stream(device="openreg:1")
    with stream:
        assert torch.accelerator.current_stream() == stream
        assert torch.accelerator.current_device_index() == 1
    assert torch.accelerator.current_device_index() == 0
    assert torch.accelerator.current_stream(1).stream_id == 0


def test_query_and_synchronize():
    stream = torch.Stream(device="openreg:0")
    assert stream.query()  # nothing enqueued yet
    with stream:
        a = torch.randn(768, 768, device="openreg")
        results = [a @ a for _ in range(6)]
    if DRIVER == "threaded_sim":
        # The work is queued on a worker thread, so it cannot be done yet.
        assert not stream.query()
    stream.synchronize()
    assert stream.query()
    torch.testing.assert_close(results[-1].cpu(), a.cpu() @ a.cpu(), rtol=1e-4, atol=1e-3)


def test_record_event_returns_a_recorded_event():
    stream = torch.Stream(device="openreg:1")
    event = stream.record_event()
    assert isinstance(event, torch.Event)
    assert event.device == torch.device("openreg:1")
    assert event.event_id != 0
    event.synchronize()
    assert event.query()


# Stream A (device 0) produces into pinned host memory; stream B (device 0 or
# 1) reads that host memory. B sees the data only if it really waited for A.
# threaded_sim's adversarial mode delays every work item, so a wait that does
# nothing fails reliably.
CROSS_STREAM_PROGRAM = """
import torch
a = torch.Stream(device="openreg:0")
for consumer_device in (0, 1):
    b = torch.Stream(device=f"openreg:{consumer_device}")
    for how in ("wait_stream", "wait_event", "event_wait"):
        host = torch.zeros(1 << 16).pin_memory()
        source = torch.full((1 << 16,), 7.0, device="openreg:0")
        torch.openreg.synchronize(0)
        with a:
            host.copy_(source * 2, non_blocking=True)
        if how == "wait_stream":
            b.wait_stream(a)
        elif how == "wait_event":
            b.wait_event(a.record_event())
        else:
            event = torch.Event(device="openreg:0")
            event.record(a)
            event.wait(b)
        with b:
            total = host.to(f"openreg:{consumer_device}", non_blocking=True).sum()
        b.synchronize()
        print(consumer_device, how, int(total.item()))
"""


def test_waits_order_streams_on_the_same_and_across_devices():
    env = {}
    if DRIVER == "threaded_sim":
        env["OPENREG_DRIVER_OPTIONS"] = "adversarial=1,adversarial_seed=3,adversarial_max_delay_us=20000"
    result = run_python(CROSS_STREAM_PROGRAM, env=env)
    assert result.returncode == 0, result.stderr
    expected = 14 * (1 << 16)
    lines = result.stdout.split("\n")
    assert [line.split()[2] for line in lines if line] == [str(expected)] * 6, result.stdout
