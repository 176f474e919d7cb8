"""torch.Event and torch.openreg.Event on openreg devices, as on CUDA."""

import time

import pytest
import torch


def test_unrecorded_event_has_no_id_and_no_device_and_is_complete():
    event = torch.Event(device="openreg")
    assert event.event_id == 0
    assert event.device == torch.device("openreg")  # no index yet
    assert "device_index=-1" in repr(event)
    assert event.query()
    event.synchronize()  # nothing to wait for


def test_recorded_events_have_distinct_nonzero_ids():
    first = torch.Event(device="openreg")
    second = torch.Event(device="openreg")
    first.record()
    second.record(torch.Stream(device="openreg:1"))
    assert first.event_id != 0 and second.event_id != 0
    assert first.event_id != second.event_id
    assert first.device == torch.device("openreg:0")
    assert second.device == torch.device("openreg:1")


def test_elapsed_time_between_timing_events_is_positive():
    start = torch.Event(device="openreg", enable_timing=True)
    end = torch.Event(device="openreg", enable_timing=True)
    a = torch.randn(512, 512, device="openreg")
    start.record()
    for _ in range(4):
        a = a @ a / 512
    time.sleep(0.01)  # also on a synchronous device, time passes between the records
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0


def test_elapsed_time_of_non_timing_events_is_a_value_error():
    start = torch.Event(device="openreg")
    end = torch.Event(device="openreg")
    start.record()
    end.record()
    with pytest.raises(ValueError, match="enable_timing=True"):
        start.elapsed_time(end)
    timing = torch.Event(device="openreg", enable_timing=True)
    timing.record()
    with pytest.raises(ValueError, match="enable_timing=True"):
        timing.elapsed_time(end)


def test_elapsed_time_of_unrecorded_events_is_an_error():
    start = torch.Event(device="openreg", enable_timing=True)
    end = torch.Event(device="openreg", enable_timing=True)
    with pytest.raises((RuntimeError, ValueError), match="recorded"):
        start.elapsed_time(end)


def test_events_can_be_re_recorded():
    stream = torch.Stream(device="openreg:0")
    start = torch.Event(device="openreg", enable_timing=True)
    end = torch.Event(device="openreg", enable_timing=True)
    for _ in range(3):
        start.record(stream)
        time.sleep(0.002)
        end.record(stream)
        end.synchronize()
        assert end.query()
        assert start.elapsed_time(end) > 0
    assert start.device == torch.device("openreg:0")


def test_event_on_another_device_than_its_first_record_is_rejected():
    event = torch.Event(device="openreg")
    event.record(torch.Stream(device="openreg:0"))
    with pytest.raises(RuntimeError, match="device"):
        event.record(torch.Stream(device="openreg:1"))


def test_openreg_event_class():
    event = torch.openreg.Event(enable_timing=True)
    assert isinstance(event, torch.Event)
    assert repr(event) == "<torch.openreg.Event uninitialized>"
    event.record()
    assert repr(event) == f"<torch.openreg.Event device=openreg:0 event_id={event.event_id:#x}>"
    on_one = torch.openreg.Event(device=1)
    on_one.record(torch.openreg.current_stream(1))
    assert on_one.device == torch.device("openreg:1")
    event.wait(torch.openreg.Stream())
    event.synchronize()
    assert event.query()


def test_interprocess_events_are_rejected_with_the_reason():
    with pytest.raises(ValueError, match="cannot be shared between processes"):
        torch.openreg.Event(interprocess=True)
