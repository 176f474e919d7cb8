"""Writes docs/op_coverage.md from the last run of //tests/python:op_db_test_*.

Usage (from the repository root; the header of the report repeats it):

    bazel test //tests/python:op_db_test_cpu_sim //tests/python:op_db_test_threaded_sim; \\
        "${OPENREG_VENV:-$HOME/.cache/openreg/venv}/bin/python" tools/op_coverage/generate_report.py

Reads each shard's op_results.json (Bazel's undeclared outputs) and test.xml
(skips decided before a test ran, and run times) under bazel-testlogs.
With --update-expectations it also rewrites
tests/python/op_coverage/expected_failures/<driver>.json to the failures of
that run, which is how a fix shrinks the list.
"""

import argparse
import collections
import glob
import json
import os
import re
import sys
import xml.etree.ElementTree as ElementTree
import zipfile
from typing import Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVERS = ("cpu_sim", "threaded_sim")
TARGET = "op_db_test"
COMMAND = (
    "bazel test //tests/python:op_db_test_cpu_sim //tests/python:op_db_test_threaded_sim; "
    '"${OPENREG_VENV:-$HOME/.cache/openreg/venv}/bin/python" tools/op_coverage/generate_report.py'
)
# Known-failure reasons are kept to one line of this length in the expectations files.
REASON_LENGTH = 240
LAYOUTS_SECTION = os.path.join(ROOT, "tools", "op_coverage", "sparse_and_quantized.md")

sys.path.insert(0, os.path.join(ROOT, "tests", "python", "op_coverage"))
import expectations  # noqa: E402  (the key of an OpInfo's run in one dtype, and the dtypes run)


class DriverRun:
    """Every shard's results for one driver."""

    def __init__(self, driver: str):
        self.driver = driver
        # expectations.key(op, dtype) -> [(sample index, status, reason)]
        self.ops: Dict[str, List[Tuple[int, str, str]]] = {}
        self.unexpected_passes: Dict[str, List[int]] = {}
        self.skipped_tests: Dict[str, str] = {}  # test name -> reason
        self.shard_seconds: List[float] = []

    def load(self, testlogs: str) -> None:
        base = os.path.join(testlogs, "tests", "python", f"{TARGET}_{self.driver}")
        shard_dirs = sorted(glob.glob(os.path.join(base, "shard_*_of_*"))) or [base]
        for shard in shard_dirs:
            self._load_results(shard)
            self._load_xml(os.path.join(shard, "test.xml"))

    def _load_results(self, shard: str) -> None:
        outputs = os.path.join(shard, "test.outputs")
        text = None
        if os.path.exists(os.path.join(outputs, "op_results.json")):
            with open(os.path.join(outputs, "op_results.json")) as file:
                text = file.read()
        elif os.path.exists(os.path.join(outputs, "outputs.zip")):
            with zipfile.ZipFile(os.path.join(outputs, "outputs.zip")) as archive:
                text = archive.read("op_results.json").decode()
        if text is None:
            sys.exit(f"{shard} has no op_results.json: run the tests first:\n  {COMMAND}")
        results = json.loads(text)
        for op, outcomes in results["ops"].items():
            self.ops[op] = [tuple(outcome) for outcome in outcomes]
        self.unexpected_passes.update(results["unexpected_passes"])

    def _load_xml(self, path: str) -> None:
        root = ElementTree.parse(path).getroot()
        for suite in root.iter("testsuite"):
            self.shard_seconds.append(float(suite.get("time", 0)))
        for case in root.iter("testcase"):
            skipped = case.find("skipped")
            if skipped is not None:
                self.skipped_tests[case.get("name")] = skipped.get("message", "skipped")

    def counts(self, op: str) -> collections.Counter:
        return collections.Counter(status for _, status, _ in self.ops.get(op, []))

    def keys_of(self, dtype: str = None) -> List[str]:
        """The runs in `dtype`; every run when it is None."""
        return [key for key in self.ops if dtype is None or expectations.split_key(key)[1] == dtype]

    def totals(self, dtype: str = None) -> collections.Counter:
        total = collections.Counter()
        for key in self.keys_of(dtype):
            total.update(self.counts(key))
        return total


def one_line(reason: str) -> str:
    line = " ".join(reason.split())
    return line if len(line) <= REASON_LENGTH else line[: REASON_LENGTH - 3] + "..."


def category(reason: str) -> str:
    """A failure's kind: the check that failed and the start of its message, without numbers."""
    text = re.sub(r"\d+", "N", one_line(reason))
    return text[:90]


def index_ranges(indices: List[int]) -> str:
    indices = sorted(indices)
    parts, start = [], None
    for i, value in enumerate(indices):
        if start is None:
            start = value
        if i + 1 == len(indices) or indices[i + 1] != value + 1:
            parts.append(str(start) if start == value else f"{start}-{value}")
            start = None
    return ", ".join(parts)


def percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


def test_name_of(op_full_name: str, dtype: str) -> str:
    return "test_samples_" + op_full_name.replace(".", "_") + "_openreg_" + dtype


def not_run_reasons(runs: List[DriverRun]) -> Dict[str, str]:
    """OpInfos with no samples run in a dtype of expectations.DTYPES, with the reason.

    A dtype the OpInfo does not declare for the CPU is left out, except when
    it declares none of them.
    """
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    reasons = {}
    for op in op_db:
        declared = [dtype for dtype in expectations.DTYPES if getattr(torch, dtype) in op.supported_dtypes("cpu")]
        if not declared:
            reasons[op.full_name] = "declares none of " + ", ".join(expectations.DTYPES) + " for the CPU"
        for dtype in declared:
            key = expectations.key(op.full_name, dtype)
            if any(key in run.ops for run in runs):
                continue
            skips = {run.skipped_tests.get(test_name_of(op.full_name, dtype)) for run in runs} - {None}
            reasons[key] = "the OpInfo skips it: " + "; ".join(sorted(skips)) if skips else "not run"
    return reasons


def report_order(key: str) -> Tuple[str, int]:
    """An OpInfo's runs together, in the order of expectations.DTYPES."""
    op, dtype = expectations.split_key(key)
    return op, expectations.DTYPES.index(dtype) if dtype in expectations.DTYPES else len(expectations.DTYPES)


def write_report(runs: List[DriverRun], path: str) -> None:
    all_ops = sorted(set().union(*(run.ops for run in runs)), key=report_order)
    lines = [
        "# Operator coverage: PyTorch's OpInfo database on openreg",
        "",
        "Generated by `tools/op_coverage/generate_report.py` from `//tests/python:op_db_test_*`; do not edit.",
        "Regenerate with:",
        "",
        "```bash",
        COMMAND,
        "```",
        "",
        "Every sample input of every OpInfo in `torch.testing._internal.common_methods_invocations.op_db`, in",
        "each of " + ", ".join(expectations.DTYPES) + " that the OpInfo declares for the CPU,",
        "runs on the CPU and on `openreg`: the functional call, the `out=` and in-place variants where the OpInfo",
        "declares them, and the gradients when it supports autograd (`tests/python/op_coverage/sample_checks.py`).",
        "A sample passes when all of them match the CPU within the OpInfo's tolerances. How the test works and how",
        "to add a device-generic test: `tests/python/op_coverage/README.md`. Below, an OpInfo run in another",
        "dtype than float32 is named `<OpInfo>[<dtype>]`, as in the expectations files.",
        "",
        "## Totals",
        "",
        "| driver | dtype | OpInfos run | samples | passed | failed | skipped | pass rate |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        for dtype in list(expectations.DTYPES) + [None]:
            total = run.totals(dtype)
            samples = sum(total.values())
            label = dtype or "**all**"
            lines.append(
                f"| {run.driver} | {label} | {len(run.keys_of(dtype))} | {samples} | {total['passed']} | "
                f"{total['failed']} | {total['skipped']} | {percent(total['passed'], samples)} |"
            )
    lines += [
        "",
        "Shard run times (the test's shards, each a Bazel test action):",
        "",
    ]
    for run in runs:
        lines.append(
            f"- {run.driver}: {len(run.shard_seconds)} shards, "
            f"{max(run.shard_seconds, default=0):.0f} s longest, {sum(run.shard_seconds):.0f} s together"
        )
    lines += ["", "## Failures and skips by kind", ""]
    for run in runs:
        kinds = collections.Counter()
        for outcomes in run.ops.values():
            kinds.update(f"{status}: {category(reason)}" for _, status, reason in outcomes if status != "passed")
        lines.append(f"**{run.driver}**")
        lines.append("")
        lines += [f"- {count} × {kind}" for kind, count in kinds.most_common()] or ["- none"]
        lines.append("")
    unexpected = {run.driver: run.unexpected_passes for run in runs if run.unexpected_passes}
    if unexpected:
        lines += ["## Listed as failing but passed (remove from the expectations)", ""]
        for driver, ops in unexpected.items():
            lines += [f"- {driver}: {op} samples {index_ranges(indices)}" for op, indices in sorted(ops.items())]
        lines.append("")
    # Hand-written: what op_db's strided samples cannot say about other layouts.
    with open(LAYOUTS_SECTION) as file:
        lines += file.read().rstrip("\n").split("\n") + [""]
    lines += [
        "## Per OpInfo",
        "",
        "Passed / failed / skipped samples on each driver.",
        "",
        "| OpInfo [dtype] | " + " | ".join(run.driver for run in runs) + " |",
        "| --- | " + " | ".join("---" for _ in runs) + " |",
    ]
    for op in all_ops:
        cells = []
        for run in runs:
            count = run.counts(op)
            cells.append(f"{count['passed']} / {count['failed']} / {count['skipped']}" if op in run.ops else "not run")
        lines.append(f"| `{op}` | " + " | ".join(cells) + " |")
    lines += ["", "## Every failed and skipped sample", ""]
    for run in runs:
        lines += [f"### {run.driver}", ""]
        for op in all_ops:
            grouped = collections.defaultdict(list)
            for index, status, reason in run.ops.get(op, []):
                if status != "passed":
                    grouped[(status, one_line(reason))].append(index)
            for (status, reason), indices in sorted(grouped.items()):
                reason = reason.replace("|", "\\|")
                lines.append(f"- `{op}` samples {index_ranges(indices)}, {status}: {reason}")
        lines.append("")
    lines += ["## OpInfos with no samples run", ""]
    lines += [f"- `{op}`: {reason}" for op, reason in sorted(not_run_reasons(runs).items())]
    lines.append("")
    with open(path, "w") as file:
        file.write("\n".join(lines))


def update_expectations(run: DriverRun) -> None:
    """Rewrites the driver's list to this run's failures.

    A sample that was listed already keeps the reason written for it (which
    may explain the failure rather than repeat it); a new one gets its error.
    """
    listed = expectations.load(run.driver)
    failures = {}
    for op, outcomes in sorted(run.ops.items()):
        known = listed.get(op, {})
        failed = {
            str(index): known.get(str(index), one_line(reason))
            for index, status, reason in outcomes
            if status == "failed"
        }
        if failed:
            failures[op] = dict(sorted(failed.items(), key=lambda item: int(item[0])))
    with open(expectations.path_for(run.driver), "w") as file:
        json.dump(failures, file, indent=1)
        file.write("\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--testlogs", default=os.path.join(ROOT, "bazel-testlogs"))
    parser.add_argument("--output", default=os.path.join(ROOT, "docs", "op_coverage.md"))
    parser.add_argument("--update-expectations", action="store_true")
    args = parser.parse_args()
    runs = []
    for driver in DRIVERS:
        run = DriverRun(driver)
        run.load(args.testlogs)
        runs.append(run)
        if args.update_expectations:
            update_expectations(run)
    write_report(runs, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
