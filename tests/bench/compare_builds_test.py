"""bench/compare_builds.py: builds alternated round by round, rows read as bench:all reads them, clear errors."""

import importlib.util
import json
import subprocess
import sys

import pytest

import compare_builds

SCRIPT = importlib.util.find_spec("compare_builds").origin


def test_builds_alternate_which_goes_first_every_round():
    calls = []

    def measure(build):
        calls.append(build)
        return {"row": len(calls)}

    samples = compare_builds.alternate_builds(measure, 3)
    assert calls == ["before", "after", "after", "before", "before", "after"]
    assert samples == {"before": {"row": [1, 4, 5]}, "after": {"row": [2, 3, 6]}}


def _row(name, openreg, reference, kind="time"):
    return json.dumps({"group": "models", "name": name, "kind": kind, "openreg": openreg, "reference": reference})


def test_a_row_s_ratio_is_the_median_of_its_pairs_ratios():
    output = "\n".join([
        "a line that is not a row",
        _row("GPT-2", [2.0, 3.0, 10.0], [1.0, 1.0, 1.0]),
        _row("overlap", [1.0, 1.0], [2.0, 4.0], kind="speedup"),
        json.dumps({"group": "driver", "name": "no reference", "kind": "time", "openreg": [1.0], "reference": []}),
    ])
    assert compare_builds.row_ratios(output) == {"GPT-2": 3.0, "overlap": 3.0}


def _fake_suite(monkeypatch, returncode, stdout="", stderr=""):
    def run(command, **kwargs):
        return subprocess.CompletedProcess(command, returncode, stdout, stderr)
    monkeypatch.setattr(compare_builds.subprocess, "run", run)


def test_a_name_no_row_has_says_so(monkeypatch):
    _fake_suite(monkeypatch, 0, stdout="[probe] nothing\n")
    with pytest.raises(SystemExit, match="no benchmark row with a reference has 'GTP' in its name"):
        compare_builds.rows_in_process("/pkg", "cpu_sim", "GTP", quick=False)


def test_a_failing_suite_names_the_build_and_shows_its_error(monkeypatch):
    _fake_suite(monkeypatch, 1, stderr="RuntimeError: no driver")
    with pytest.raises(SystemExit, match=r"(?s)failed under /pkg.*RuntimeError: no driver"):
        compare_builds.rows_in_process("/pkg", "cpu_sim", "GPT", quick=False)


def test_a_folder_without_the_package_is_rejected_before_anything_runs(tmp_path):
    (tmp_path / "after" / "torch_openreg").mkdir(parents=True)
    result = subprocess.run([sys.executable, SCRIPT, "--before", str(tmp_path), "--after", str(tmp_path / "after"),
                             "--row", "GPT"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert f"--before {tmp_path} holds no torch_openreg package" in result.stderr
