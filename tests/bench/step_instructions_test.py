"""bench/step_instructions.py: reading callgrind's counts, per-step differences, and bad arguments refused with
what was expected before anything runs under valgrind."""

import importlib.util
import os
import subprocess
import sys

import pytest

from models import model_named
from step_instructions import collected_events, per_step

SCRIPT = importlib.util.find_spec("step_instructions").origin

STDERR = """\
==3610== For interactive control, run 'callgrind_control -h'.
==3610==
==3610== Events    : Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
==3610== Collected : 128811 28323 11770 1086 920 573 1068 783 547
==3610==
==3610== I   refs:      128,811
"""


def test_the_closing_counts_are_read_by_event_name():
    events = collected_events(STDERR)
    assert events["Ir"] == 128811 and events["I1mr"] == 1086 and events["D1mr"] == 920 and events["D1mw"] == 573
    assert collected_events("==1== Collected : 5\n") is None


def test_per_step_is_the_difference_of_two_runs_divided_by_their_steps():
    def run(ir, i1, d1r, d1w):
        return {"Ir": ir, "I1mr": i1, "D1mr": d1r, "D1mw": d1w}
    totals = {("cpu", 5): run(1000, 100, 10, 1), ("cpu", 25): run(3000, 300, 50, 21),
              ("openreg", 5): run(2000, 100, 10, 1), ("openreg", 25): run(6000, 500, 30, 1)}
    counts = per_step(totals, 5, 25)
    assert counts["cpu"] == {"Ir": 100, "I1mr": 10, "D1mr": 2, "D1mw": 1}
    assert counts["openreg"] == {"Ir": 200, "I1mr": 20, "D1mr": 1, "D1mw": 0}


def test_a_model_is_named_by_part_of_its_name_or_the_error_names_them_all():
    assert model_named("MLP") == "small MLP with Adam"
    with pytest.raises(ValueError, match="no model name contains 'no such model'; the models are: small MLP with"):
        model_named("no such model")


def test_counts_out_of_order_say_what_is_needed_before_anything_runs():
    # No device is needed to reject the arguments: keep the installed backend out.
    result = subprocess.run([sys.executable, SCRIPT, "--counts", "25", "5"], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert result.returncode == 2, result.stderr
    assert "--counts needs 0 <= N1 < N2, got 25 5" in result.stderr
