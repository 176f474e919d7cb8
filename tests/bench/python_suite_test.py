"""bench/python_suite.py's host CPU row: several pairs of processes, pooled, each fresh process closed."""

import pytest

import python_suite
from alternation import Alternation

OPENREG_SECONDS, CPU_SECONDS = 2.0, 1.0


class FakeProcess:
    """Stands in for a ReferenceProcess: a fixed time per device, and a record of what it was asked."""

    def __init__(self, device, fail=False):
        self.device, self.fail = device, fail
        self.requests, self.closed = [], False

    def seconds_per_call(self, suite, name, calls):
        self.requests.append((suite, name, calls))
        if self.fail:
            raise RuntimeError(f"the {self.device} reference process exited")
        return OPENREG_SECONDS if self.device == "openreg" else CPU_SECONDS


def _starter(started, failing_device=None):
    def start(device):
        process = FakeProcess(device, fail=device == failing_device)
        process.close = lambda: setattr(process, "closed", True)
        started.append(process)
        return process
    return start


def test_the_row_pools_this_process_and_fresh_pairs():
    started, cpu = [], FakeProcess("cpu")
    row = python_suite.host_cpu(cpu, 2, Alternation(2), 3, start_process=_starter(started))
    assert row["name"].endswith("after openreg ran (3 process pairs)")
    # Two pairs from this process against `cpu`, then two from each of two fresh pairs.
    assert len(row["openreg"]) == len(row["reference"]) == 6
    assert row["reference"] == [CPU_SECONDS] * 6
    assert row["openreg"][2:] == [OPENREG_SECONDS] * 4  # the first two are this process's own CPU step
    assert [process.device for process in started] == ["openreg", "cpu", "openreg", "cpu"]
    assert all(process.closed for process in started)
    # Fresh processes time the host CPU suite: a process that used openreg builds it by training first.
    assert {suite for process in started for suite, _, _ in process.requests} == {"host CPU"}
    assert all(name == "small MLP step with Adam" for process in started for _, name, _ in process.requests)


def test_a_fresh_process_that_fails_is_closed_with_its_partner():
    started = []
    with pytest.raises(RuntimeError, match="the cpu reference process exited"):
        python_suite.host_cpu(FakeProcess("cpu"), 2, Alternation(2), 2, start_process=_starter(started, "cpu"))
    assert [process.device for process in started] == ["openreg", "cpu"]
    assert all(process.closed for process in started)
