"""bench/step_threads.py: it reports a step's threads, and a model it cannot find is a clear error."""

import importlib.util
import os
import re
import subprocess
import sys

SCRIPT = importlib.util.find_spec("step_threads").origin


def _run(*args):
    # CPU eager needs no device: keep the installed backend out.
    env = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, SCRIPT, *args], env=env, capture_output=True, text=True, timeout=300)


def test_a_cpu_step_reports_its_threads_per_round():
    # The scheduler adds a running thread's CPU time to its counters at clock ticks, so a round must last many
    # ticks to show any: 100 steps of the MLP take tens of milliseconds.
    result = _run("--model", "MLP", "--device", "cpu", "--steps", "100", "--rounds", "2")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "small MLP with Adam on CPU eager, per step:", result.stdout
    rounds = lines[1:]
    assert len(rounds) == 2, result.stdout
    for line in rounds:
        assert re.match(r"  [\d.]+ ms wall, threads' CPU [\d.]+ of the cores' [\d.]+ ms; ", line), line
        assert re.search(r"; python [\d.]+ ms \(waited [\d.]+ ms for a core; [\d.]+ voluntary, [\d.]+ involuntary\)",
                         line), line


def test_an_unknown_model_names_the_models_there_are():
    result = _run("--model", "no such model", "--device", "cpu")
    assert result.returncode == 2, result.stderr
    assert "no model name contains 'no such model'" in result.stderr
    assert "small ResNet" in result.stderr
