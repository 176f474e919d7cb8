"""bench/step_bound.py: a model it cannot find, or too few rounds, is a clear error before anything is timed."""

import importlib.util
import os
import subprocess
import sys

SCRIPT = importlib.util.find_spec("step_bound").origin


def _run(*args):
    # No device is needed to reject the arguments: keep the installed backend out.
    env = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    return subprocess.run([sys.executable, SCRIPT, *args], env=env, capture_output=True, text=True, timeout=120)


def test_an_unknown_model_names_the_models_there_are():
    result = _run("--model", "no such model")
    assert result.returncode == 2, result.stderr
    assert "no model name contains 'no such model'" in result.stderr
    assert "GPT-2-style decoder" in result.stderr and "small ResNet" in result.stderr


def test_too_few_rounds_or_calls_say_what_is_needed():
    for args, found in ((("--rounds", "1"), "got 1 and 10"), (("--calls", "0"), "got 10 and 0")):
        result = _run(*args)
        assert result.returncode == 2, result.stderr
        assert "--rounds must be at least 2 and --calls at least 1" in result.stderr
        assert found in result.stderr
