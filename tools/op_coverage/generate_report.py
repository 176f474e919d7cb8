"""Writes docs/op_coverage.md from the last run of //tests/python:op_db_test_*
(or, with --suite op_db_extra_dtypes, its float16, bfloat16 and complex64
section from the last run of //tests/python:op_db_extra_dtypes_full_test_*;
with --suite module_db, its module database section from the last run of
//tests/python:module_db_test_*; each suite's part is kept when another is
regenerated).

Usage (from the repository root; the header of the report repeats it):

    bazel test //tests/python:op_db_test_cpu_sim //tests/python:op_db_test_threaded_sim; \\
        "${OPENREG_VENV:-$HOME/.cache/openreg/venv}/bin/python" tools/op_coverage/generate_report.py

Reads each shard's op_results.json (module_results.json; Bazel's undeclared
outputs) and test.xml (skips decided before a test ran, and run times) under
bazel-testlogs. With --update-expectations it also rewrites
tests/python/op_coverage/expected_failures/<driver>.json (module_db/<driver>.json)
to the failures of that run, which is how a fix shrinks the list.
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



# The test whose results each suite's part of the report comes from. The
# extra dtypes' full run is a manual target: CI runs op_db_extra_dtypes_test,
# which checks only the first samples of each run (CI_TARGET).
TARGETS = {"op_db": "op_db_test", "op_db_extra_dtypes": "op_db_extra_dtypes_full_test", "module_db": "module_db_test"}
CI_TARGET = "op_db_extra_dtypes_test"


def command(suite: str) -> str:
    """How to regenerate a suite's part of the report."""
    targets = " ".join(f"//tests/python:{TARGETS[suite]}_{driver}" for driver in DRIVERS)
    flags = "" if suite == "op_db" else f" --suite {suite}"
    return f'bazel test {targets}; "${{OPENREG_VENV:-$HOME/.cache/openreg/venv}}/bin/python" tools/op_coverage/generate_report.py{flags}'


COMMAND = command("op_db")
# The headings of the report's parts after op_db's, in the order they appear;
# each part runs from its heading to the next one (or the end of the file).
EXTRA_DTYPES_HEADING = "## float16, bfloat16 and complex64 (op_db_extra_dtypes)"
MODULE_DB_HEADING = "## Module database (module_db)"
SECTION_HEADINGS = {"op_db_extra_dtypes": EXTRA_DTYPES_HEADING, "module_db": MODULE_DB_HEADING}
# Known-failure reasons are kept to one line of this length in the expectations files.
REASON_LENGTH = 240
LAYOUTS_SECTION = os.path.join(ROOT, "tools", "op_coverage", "sparse_and_quantized.md")

sys.path.insert(0, os.path.join(ROOT, "tests", "python", "op_coverage"))
import expectations  # noqa: E402  (the key of an OpInfo's run in one dtype, and the dtypes run)


class DriverRun:
    """Every shard's results for one driver."""

    def __init__(self, driver: str, suite: str = "op_db", target: str = None):
        self.driver = driver
        self.suite = suite
        self.target = target or TARGETS[suite]
        self.sample_limit = None  # the runs' OPENREG_OP_DB_SAMPLE_LIMIT, if any
        # expectations.key(op, dtype) -> [(sample index, status, reason)]
        self.ops: Dict[str, List[Tuple[int, str, str]]] = {}
        self.unexpected_passes: Dict[str, List[int]] = {}
        self.skipped_tests: Dict[str, str] = {}  # test name -> reason
        self.shard_seconds: List[float] = []

    def load(self, testlogs: str) -> None:
        base = os.path.join(testlogs, "tests", "python", f"{self.target}_{self.driver}")
        shard_dirs = sorted(glob.glob(os.path.join(base, "shard_*_of_*"))) or [base]
        for shard in shard_dirs:
            self._load_results(shard)
            self._load_xml(os.path.join(shard, "test.xml"))

    def _load_results(self, shard: str) -> None:
        outputs = os.path.join(shard, "test.outputs")
        name = "module_results.json" if self.suite == "module_db" else "op_results.json"
        text = None
        if os.path.exists(os.path.join(outputs, name)):
            with open(os.path.join(outputs, name)) as file:
                text = file.read()
        elif os.path.exists(os.path.join(outputs, "outputs.zip")):
            with zipfile.ZipFile(os.path.join(outputs, "outputs.zip")) as archive:
                text = archive.read(name).decode()
        if text is None:
            sys.exit(f"{shard} has no {name}: run the tests first:\n  {command(self.suite)}")
        results = json.loads(text)
        for op, outcomes in results["ops"].items():
            self.ops[op] = [tuple(outcome) for outcome in outcomes]
        self.unexpected_passes.update(results["unexpected_passes"])
        self.sample_limit = results.get("sample_limit")

    def _load_xml(self, path: str) -> None:
        root = ElementTree.parse(path).getroot()
        for suite in root.iter("testsuite"):
            self.shard_seconds.append(float(suite.get("time", 0)))
        for case in root.iter("testcase"):
            skipped = case.find("skipped")
            if skipped is not None:
                self.skipped_tests[case.get("name")] = skipped.get("message", "skipped")

    def counts(self, op: str) -> collections.Counter:
        """passed, failed, skipped, and by_property: the passed samples an oracle checked (no CPU values)."""
        counts = collections.Counter(status for _, status, _ in self.ops.get(op, []))
        counts["by_property"] += sum(1 for _, status, reason in self.ops.get(op, []) if by_property(status, reason))
        return counts

    def keys_of(self, dtype: str = None) -> List[str]:
        """The runs in `dtype`; every run when it is None."""
        return [key for key in self.ops if dtype is None or expectations.split_key(key)[1] == dtype]

    def totals(self, dtype: str = None) -> collections.Counter:
        total = collections.Counter()
        for key in self.keys_of(dtype):
            total.update(self.counts(key))
        return total


def by_property(status: str, reason: str) -> bool:
    """Whether a sample passed by its oracle's check (sample_checks.outcome_of), not by the CPU's values."""
    return status == "passed" and reason.startswith("checked by property")


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


def percent(part: int, whole: int, digits: int = 1) -> str:
    return f"{100.0 * part / whole:.{digits}f}%" if whole else "n/a"


# What the two rates of totals_table count, for the text above each table.
RATES_NOTE = [
    "*pass rate* is passed / samples. *of compared* leaves out the skipped samples, those whose CPU result is",
    "no reference (the OpInfo or ModuleInfo skips its CPU comparison: uninitialized memory, random numbers;",
    "or the CPU's own result changes with the seed): passed / (passed + failed). A sample where the CPU raises",
    "(for instance it has no kernel for the dtype) passes when openreg raises too, and fails when it does not.",
]

# op_db's samples without a CPU reference: property oracles (oracles.py), then the structure-only check.
SKIPS_CHECKED_NOTE = [
    "A sample whose CPU result is no reference for its values (random numbers, uninitialized memory) counts",
    "as *passed* only when its OpInfo has an oracle in `tests/python/op_coverage/oracles.py` and every result",
    "of the sample holds it: the functional call, `out=` and in-place where declared, and the gradients where",
    "the op has them; *by property* counts these passes. What an oracle checks, by kind:",
    "",
    "- empty family (`empty`, `empty_like`, `empty_permuted`, `empty_strided`, `new_empty`,",
    "  `new_empty_strided`): shape, dtype, layout, strides, requires_grad and any memory format asked for,",
    "  exactly as the CPU's result; the values are uninitialized and not the contract.",
    "- sampling ops: the support and the parameters' effect, deterministically: `bernoulli` in {0, 1} with",
    "  p=0 and p=1 exact, `uniform` in [from, to] (rounding to the dtype can reach `to`), `exponential` >= 0,",
    "  `geometric` integers >= 1, `log_normal` > 0, `cauchy` without NaN, `normal` finite with std 0 giving the",
    "  mean, `randint`/`randint_like` integers in [low, high), `multinomial` indices in range, distinct without",
    "  replacement, a zero weight never drawn, `randn`/`randn_like` (and the `rand_like` OpInfo, which calls",
    "  `randn_like`) finite with the CPU's structure; a mean within 6 standard errors only on samples of at",
    "  least 100 values; `bernoulli`'s and `normal`'s gradients zero, as PyTorch defines them.",
    "- dropout family: every element the input scaled as the op defines or the dropped value, whole channels",
    "  for `dropout2d`/`dropout3d`/`feature_alpha_dropout`, the identity for p=0 or evaluation, all dropped",
    "  for p=1; gradients the same multiplier applied to the cotangent. `rrelu`: x for x >= 0, a x with a in",
    "  [lower, upper] otherwise, gradient likewise.",
    "- `fractional_max_pool2d/3d`: every output the input at its index (or, without indices, at some",
    "  position) and the maximum of a kernel-sized window containing it; the gradient routes each output's",
    "  cotangent to a position holding its value.",
    "- `svd_lowrank`/`pca_lowrank`: orthonormal U and V, non-negative descending singular values, the",
    "  reconstruction exact where the rank is at most q and within 0.25 |A| of the best rank-q error otherwise",
    "  (the CPU's worst over 200 seeds: 0.09). Their gradients depend on the draws where q is below the rank",
    "  and have no oracle: samples with gradients stay skipped.",
    "",
    "A sample without a reference and without an oracle (or whose gradients have none) stays *skipped*, but",
    "is still checked without its values: openreg must raise where the CPU raises and return results of the",
    "CPU's structure, shapes and dtypes, on openreg; otherwise it fails. *with checked skips* counts these as",
    "passes too: (passed + skipped) / samples.",
]


def test_name_of(op_full_name: str, dtype: str) -> str:
    return "test_samples_" + op_full_name.replace(".", "_") + "_openreg_" + dtype


def not_run_reasons(runs: List[DriverRun], dtypes: Tuple[str, ...] = expectations.DTYPES) -> Dict[str, str]:
    """OpInfos with no samples run in one of `dtypes`, with the reason.

    A dtype the OpInfo does not declare for the CPU is left out, except when
    it declares none of them.
    """
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    reasons = {}
    for op in op_db:
        declared = [dtype for dtype in dtypes if getattr(torch, dtype) in op.supported_dtypes("cpu")]
        if not declared:
            reasons[op.full_name] = "declares none of " + ", ".join(dtypes) + " for the CPU"
        for dtype in declared:
            key = expectations.key(op.full_name, dtype)
            if any(key in run.ops for run in runs):
                continue
            skips = {run.skipped_tests.get(test_name_of(op.full_name, dtype)) for run in runs} - {None}
            reasons[key] = "the OpInfo skips it: " + "; ".join(sorted(skips)) if skips else "not run"
    return reasons


def report_order(key: str) -> Tuple[str, int]:
    """An OpInfo's runs together, in the order of expectations.DTYPES and EXTRA_DTYPES."""
    op, dtype = expectations.split_key(key)
    order = expectations.DTYPES + expectations.EXTRA_DTYPES
    return op, order.index(dtype) if dtype in order else len(order)


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
    ] + RATES_NOTE + SKIPS_CHECKED_NOTE + [""]
    lines += totals_table(runs, expectations.DTYPES, "OpInfos", checked_skips=True)
    lines += [
        "",
        "These totals are from the runs of `//tests/python:op_db_test_<driver>` (CI's target) this report was",
        "generated from. The float16, bfloat16 and complex64 totals below come from that section's own run,",
        "the manual full target, regenerated separately (`--suite op_db_extra_dtypes`).",
        "",
        "Shard run times (the test's shards, each a Bazel test action):",
        "",
    ]
    lines += shard_time_lines(runs)
    lines += ["", "## Failures, skips and property checks by kind", ""]
    for run in runs:
        kinds = collections.Counter()
        for outcomes in run.ops.values():
            # An oracle's kind is named as it is (its numbers are part of it); other reasons by category.
            kinds.update(
                f"{status}: {one_line(reason) if by_property(status, reason) else category(reason)}"
                for _, status, reason in outcomes
                if status != "passed" or reason
            )
        lines.append(f"**{run.driver}**")
        lines.append("")
        lines += [f"- {count} × {kind}" for kind, count in kinds.most_common()] or ["- none"]
        lines.append("")
    lines += unexpected_pass_lines(runs, "##", "samples")
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
    lines += ["", "## Every failed, skipped and property-checked sample", ""]
    for run in runs:
        lines += [f"### {run.driver}", ""]
        for op in all_ops:
            lines += not_passed_lines(run, op, "samples")
        lines.append("")
    lines += ["## OpInfos with no samples run", ""]
    lines += [f"- `{op}`: {reason}" for op, reason in sorted(not_run_reasons(runs).items())]
    lines.append("")
    write_part(path, "op_db", lines)


def shard_time_lines(runs: List[DriverRun]) -> List[str]:
    return [
        f"- {run.driver}: {len(run.shard_seconds)} shards, "
        f"{max(run.shard_seconds, default=0):.0f} s longest, {sum(run.shard_seconds):.0f} s together"
        for run in runs
    ]


def unexpected_pass_lines(runs: List[DriverRun], heading: str, what: str) -> List[str]:
    unexpected = {run.driver: run.unexpected_passes for run in runs if run.unexpected_passes}
    if not unexpected:
        return []
    lines = [f"{heading} Listed as failing but passed (remove from the expectations)", ""]
    for driver, ops in unexpected.items():
        lines += [f"- {driver}: {op} {what} {index_ranges(indices)}" for op, indices in sorted(ops.items())]
    return lines + [""]


def not_passed_lines(run: DriverRun, key: str, what: str, listed: Dict[str, Dict[str, str]] = None) -> List[str]:
    """One line per (status, reason) of the run `key`'s samples that did not pass, or passed by
    property, with their indices.

    A failure's reason is the one `listed` (the expectations) gives for it, if any.
    """
    known = (listed or {}).get(key, {})
    grouped = collections.defaultdict(list)
    for index, status, reason in run.ops.get(key, []):
        if status != "passed" or by_property(status, reason):
            grouped[(status, one_line(known.get(str(index), reason)))].append(index)
    return [
        f"- `{key}` {what} {index_ranges(indices)}, {status}: " + reason.replace("|", "\\|")
        for (status, reason), indices in sorted(grouped.items())
    ]


def split_report(path: str) -> Dict[str, str]:
    """The report's parts by suite: op_db's up to the first of SECTION_HEADINGS, then each section."""
    try:
        with open(path) as file:
            text = file.read()
    except FileNotFoundError:
        return {}
    starts = sorted(
        (text.find("\n" + heading + "\n") + 1, suite)
        for suite, heading in SECTION_HEADINGS.items()
        if "\n" + heading + "\n" in text
    )
    bounds = [(0, "op_db")] + starts + [(len(text), None)]
    return {suite: text[start:end].strip("\n") for (start, suite), (end, _) in zip(bounds, bounds[1:])}


def write_part(path: str, suite: str, lines: List[str]) -> None:
    """Replaces (or adds) `suite`'s part of the report at `path`, keeping the others."""
    parts = split_report(path)
    parts[suite] = "\n".join(lines).strip("\n")
    with open(path, "w") as file:
        file.write("\n\n".join(parts[each] for each in expectations.SUITES if parts.get(each)) + "\n")


def totals_table(
    runs: List[DriverRun], dtypes: Tuple[str, ...], what: str, digits: int = 1, checked_skips: bool = False
) -> List[str]:
    """The totals per driver and dtype; `checked_skips` adds the rate counting skipped samples
    (checked without their values) as passed."""
    extra = " with checked skips |" if checked_skips else ""
    # Only op_db's suites have oracles (and checked skips).
    by_property_column = " by property |" if checked_skips else ""
    lines = [
        f"| driver | dtype | {what} run | samples | passed |{by_property_column} failed | skipped | pass rate | of compared |{extra}",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- | --- |" if checked_skips else ""),
    ]
    for run in runs:
        for dtype in list(dtypes) + [None]:
            total = run.totals(dtype)
            samples = total["passed"] + total["failed"] + total["skipped"]
            compared = total["passed"] + total["failed"]
            lines.append(
                f"| {run.driver} | {dtype or '**all**'} | {len(run.keys_of(dtype))} | {samples} | {total['passed']} |"
                + (f" {total['by_property']} |" if checked_skips else "")
                + f" {total['failed']} | {total['skipped']} | {percent(total['passed'], samples, digits)} | "
                f"{percent(total['passed'], compared, digits)} |"
                + (f" {percent(total['passed'] + total['skipped'], samples, digits)} |" if checked_skips else "")
            )
    return lines


def write_module_section(runs: List[DriverRun], path: str) -> None:
    """Replaces (or appends) the module database section of the report at `path`."""
    lines = [
        MODULE_DB_HEADING,
        "",
        "Generated by `tools/op_coverage/generate_report.py --suite module_db` from `//tests/python:module_db_test_*`.",
        "Regenerate with:",
        "",
        "```bash",
        command("module_db"),
        "```",
        "",
        "Every input of every ModuleInfo in `torch.testing._internal.common_modules.module_db`, in float32 and",
        "float64, in training mode (and in evaluation mode too, as `<module>.eval`, where the ModuleInfo says the",
        "two differ), runs on the CPU and on `openreg` as PyTorch's `TestModule.test_cpu_gpu_parity` runs CUDA:",
        "the module is built from the same seed on both sides and the openreg one gets the CPU one's parameters",
        "and buffers; the forward results, the gradients of the inputs and of every parameter (for cotangents",
        "drawn on the CPU) and the buffers after the call must match within `assert_close`'s default tolerance",
        "for the dtype, loosened where the ModuleInfo overrides it for that test",
        "(`tests/python/op_coverage/module_checks.py`, `module_db_test.py`). Known failures are in",
        "`tests/python/op_coverage/expected_failures/module_db/<driver>.json`, keyed like op_db's",
        "(`<module>[<dtype>]` for float64); any other failure fails the test, and a listed input that passes is",
        "reported below. A sample is one (module, dtype, mode, input).",
        "",
        "### Totals",
        "",
    ] + RATES_NOTE + [""]
    # Two decimals: the target (99%) is met by far, and one failure in thousands must not read 100.0%.
    lines += totals_table(runs, ("float32", "float64"), "ModuleInfos", digits=2)
    lines += ["", "Shard run times:", ""]
    lines += shard_time_lines(runs)
    lines += ["", "### Expected failures and skips", ""]
    for run in runs:
        listed = expectations.load(run.driver, "module_db")
        lines += [f"**{run.driver}**", ""]
        entries = [line for key in sorted(run.ops, key=report_order) for line in not_passed_lines(run, key, "inputs", listed)]
        lines += entries or ["- none"]
        lines.append("")
    lines += unexpected_pass_lines(runs, "###", "inputs")
    write_part(path, "module_db", lines)


def write_extra_dtypes_section(runs: List[DriverRun], ci_runs: List[DriverRun], path: str) -> None:
    """Replaces (or adds) the float16, bfloat16 and complex64 section of the report at `path`.

    `runs` are the full runs; `ci_runs` CI's runs of the first samples (those
    whose results are in the test logs; their shard times are CI's cost).
    """
    limits = sorted({run.sample_limit for run in ci_runs} - {None})
    limit = "/".join(str(each) for each in limits) or "OPENREG_OP_DB_SAMPLE_LIMIT (tests/python/BUILD.bazel)"
    lines = [
        EXTRA_DTYPES_HEADING,
        "",
        "Generated by `tools/op_coverage/generate_report.py --suite op_db_extra_dtypes` from",
        "`//tests/python:op_db_extra_dtypes_full_test_*`. Regenerate with:",
        "",
        "```bash",
        command("op_db_extra_dtypes"),
        "```",
        "",
        "The same test as above (`op_db_test.py`) in " + ", ".join(expectations.EXTRA_DTYPES) + ", where the",
        "OpInfo declares the dtype for the CPU, with `assert_close`'s default tolerance for the dtype where it is",
        "looser than `test_compare_cpu`'s 1e-3 (bfloat16's rtol, 1.6e-2) and the OpInfo's overrides. Known",
        "failures are in `tests/python/op_coverage/expected_failures/op_db_extra_dtypes/<driver>.json`.",
        "",
        "**What CI runs.** Three more dtypes at op_db's full cost would add about as much test time again as",
        "op_db itself, so CI (`bazel test //...`) runs `//tests/python:op_db_extra_dtypes_test_<driver>`:",
        f"every OpInfo in every dtype here, but only its first {limit} samples (PyTorch's own device tests",
        "trim the same way: many check only the first sample), held to the same expectations. The full run",
        "(every sample, the numbers below) is the manual target `op_db_extra_dtypes_full_test_<driver>`,",
        "run with the command above.",
        "",
        "### Totals (full run)",
        "",
    ] + RATES_NOTE + SKIPS_CHECKED_NOTE + [""]
    lines += totals_table(runs, expectations.EXTRA_DTYPES, "OpInfos", digits=2, checked_skips=True)
    without_full_run = [driver for driver in DRIVERS if driver not in {run.driver for run in runs}]
    if without_full_run:
        lines += [
            "",
            f"No full run on {', '.join(without_full_run)} (the report was generated with `--drivers`): "
            "its expectations are only checked by CI's run of the first samples.",
        ]
    lines += ["", "Shard run times of the full run:", ""]
    lines += shard_time_lines(runs)
    lines += ["", "CI's run (the first samples only), its test time:", ""]
    lines += shard_time_lines(ci_runs) or ["- not run yet"]
    lines += [
        "",
        "Times are wall-clock, from the shards' test.xml: on a loaded machine they exceed the CPU time used.",
    ]
    lines += ["", "### Failures and skips", ""]
    for run in runs:
        listed = expectations.load(run.driver, run.suite)
        lines += [f"**{run.driver}**", ""]
        entries = [line for key in sorted(run.ops, key=report_order) for line in not_passed_lines(run, key, "samples", listed)]
        lines += entries or ["- none"]
        lines.append("")
    lines += unexpected_pass_lines(runs, "###", "samples")
    lines += ["### OpInfos with no samples run in these dtypes", ""]
    lines += [f"- `{op}`: {reason}" for op, reason in sorted(not_run_reasons(runs, expectations.EXTRA_DTYPES).items())]
    write_part(path, "op_db_extra_dtypes", lines)


def ci_runs_of(testlogs: str) -> List[DriverRun]:
    """CI's runs of the extra dtypes (op_db_extra_dtypes_test_*) found in `testlogs`."""
    runs = []
    for driver in DRIVERS:
        if os.path.isdir(os.path.join(testlogs, "tests", "python", f"{CI_TARGET}_{driver}")):
            run = DriverRun(driver, "op_db_extra_dtypes", CI_TARGET)
            run.load(testlogs)
            runs.append(run)
    return runs


def update_expectations(run: DriverRun) -> None:
    """Rewrites the driver's list to this run's failures.

    A sample that was listed already keeps the reason written for it (which
    may explain the failure rather than repeat it); a new one gets its error.
    """
    listed = expectations.load(run.driver, run.suite)
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
    with open(expectations.path_for(run.driver, run.suite), "w") as file:
        json.dump(failures, file, indent=1)
        file.write("\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--testlogs", default=os.path.join(ROOT, "bazel-testlogs"))
    parser.add_argument("--output", default=os.path.join(ROOT, "docs", "op_coverage.md"))
    parser.add_argument("--update-expectations", action="store_true")
    parser.add_argument("--suite", choices=expectations.SUITES, default="op_db")
    parser.add_argument(
        "--drivers", default=",".join(DRIVERS), help="the drivers whose runs to read, comma-separated (all by default)"
    )
    args = parser.parse_args()
    drivers = args.drivers.split(",")
    unknown = sorted(set(drivers) - set(DRIVERS))
    if unknown:
        parser.error(f"unknown driver(s) {unknown} in --drivers: expected some of {list(DRIVERS)}")
    runs = []
    for driver in drivers:
        run = DriverRun(driver, args.suite)
        run.load(args.testlogs)
        runs.append(run)
        if args.update_expectations:
            update_expectations(run)
    if args.suite == "op_db":
        write_report(runs, args.output)
    elif args.suite == "op_db_extra_dtypes":
        write_extra_dtypes_section(runs, ci_runs_of(args.testlogs), args.output)
    else:
        write_module_section(runs, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
