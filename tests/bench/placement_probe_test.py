"""bench/placement_probe.py: the probes around each row, and a probe that fails or prints no number."""

import json
import stat

from placement_probe import PlacementProbe


def fake_probe(tmp_path, outputs, exit_code=0, stderr=""):
    """A probe printing `outputs` in turn (one per run), exiting with `exit_code`."""
    counter = tmp_path / "runs"
    counter.write_text("0")
    script = tmp_path / "probe"
    lines = " ".join(repr(o) for o in outputs)
    script.write_text(f"""#!/bin/sh
n=$(cat {counter}); echo $((n + 1)) > {counter}
set -- {lines}
shift $n
echo "$1"
echo {stderr!r} >&2
exit {exit_code}
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_each_row_gets_the_probe_before_and_after_it(tmp_path, capsys):
    probe = PlacementProbe(fake_probe(tmp_path, ["61.5", "340.0", "58.0"]))
    probe.emit({"name": "a"})
    probe.emit({"name": "b"})
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows == [{"name": "a", "core_to_core_ns": [61.5, 340.0]}, {"name": "b", "core_to_core_ns": [340.0, 58.0]}]


def test_without_a_probe_rows_are_printed_as_they_are(capsys):
    PlacementProbe(None).emit({"name": "a"})
    assert json.loads(capsys.readouterr().out) == {"name": "a"}


def test_a_failing_probe_is_reported_once_and_the_rows_go_on_without_it(tmp_path, capsys):
    probe = PlacementProbe(fake_probe(tmp_path, [""], exit_code=1, stderr="cannot run on CPU 1"))
    probe.emit({"name": "a"})
    probe.emit({"name": "b"})
    out, err = capsys.readouterr()
    assert [json.loads(line) for line in out.splitlines()] == [{"name": "a"}, {"name": "b"}]
    assert err.count("placement probe") == 1
    assert "failed (exit code 1): cannot run on CPU 1; the rows from here on have no core_to_core_ns" in err


def test_a_probe_that_stops_printing_numbers_ends_the_probing(tmp_path, capsys):
    probe = PlacementProbe(fake_probe(tmp_path, ["70.0", "fast", "80.0"]))
    probe.emit({"name": "a"})
    probe.emit({"name": "b"})
    out, err = capsys.readouterr()
    assert [json.loads(line) for line in out.splitlines()] == [{"name": "a"}, {"name": "b"}]
    assert "printed 'fast', expected nanoseconds per round trip (a number)" in err


def test_a_probe_that_cannot_be_run_is_reported(tmp_path, capsys):
    PlacementProbe(str(tmp_path / "missing")).emit({"name": "a"})
    out, err = capsys.readouterr()
    assert json.loads(out) == {"name": "a"}
    assert "missing cannot be run" in err
