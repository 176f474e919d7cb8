"""bench/op_profile.py: reading perf's report, and turning samples into nanoseconds per op and thread."""

import pytest

from op_profile import LAUNCHING, loop_result, parse_report, per_op

REPORT = """\
# Samples: 47K of event 'cpu-clock'
#
#       Period      Pid:Command         Symbol
# ............  ......................  ..............
#
      21500000    22828:python          [.] PyDict_GetItemWithError
        500000    22828:python          [.] PyDict_GetItemWithError@plt
    1751750000    22831:openreg_stream  [.] openreg::threaded_sim::Doorbell::Pause
     901500000    22831:openreg_stream  [k] __schedule
     285250000    22828:python          [.] openreg::ReleaseCompletedWork
       2000000    22830:python          [.] _PyObject_Free
        250000    22832:pt autograd 0   [.] 0x00007f7705edac40

"""


def test_every_sample_line_is_read_and_headers_are_not():
    rows = parse_report(REPORT)
    assert rows == [
        (21500000, 22828, "python", "PyDict_GetItemWithError"),
        (500000, 22828, "python", "PyDict_GetItemWithError@plt"),
        (1751750000, 22831, "openreg_stream", "openreg::threaded_sim::Doorbell::Pause"),
        (901500000, 22831, "openreg_stream", "__schedule"),
        (285250000, 22828, "python", "openreg::ReleaseCompletedWork"),
        (2000000, 22830, "python", "_PyObject_Free"),
        (250000, 22832, "pt autograd 0", "0x00007f7705edac40"),
    ]


def test_the_busiest_python_thread_is_the_launching_one_and_times_are_per_op():
    table = per_op(parse_report(REPORT), ops=1_000_000)
    assert table[LAUNCHING]["openreg::ReleaseCompletedWork"] == pytest.approx(285.25)
    assert sum(table[LAUNCHING].values()) == pytest.approx(21.5 + 0.5 + 285.25)
    # Another Python thread keeps its name; threads of one name add up.
    assert table["python"]["_PyObject_Free"] == pytest.approx(2.0)
    assert sum(table["openreg_stream"].values()) == pytest.approx(1751.75 + 901.5)
    assert table["pt autograd 0"]["0x00007f7705edac40"] == pytest.approx(0.25)


def test_a_window_without_ops_is_an_error_not_a_division_by_zero():
    with pytest.raises(ValueError, match="no op ran"):
        per_op(parse_report(REPORT), ops=0)


def test_the_loops_last_line_gives_its_ops_and_seconds():
    assert loop_result("12000 6.5\n") == (12000.0, 6.5)


def test_a_loop_that_died_is_reported_with_what_was_expected(capsys):
    with pytest.raises(SystemExit, match="expected the loop's process to end with a line 'OPS SECONDS', got ''"):
        loop_result("")
