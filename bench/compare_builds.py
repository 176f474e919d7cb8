"""Times two builds of the package side by side: did a change make openreg slower, or faster?

    python bench/compare_builds.py --before DIR --after DIR [--driver threaded_sim] [--rounds 7]
    python bench/compare_builds.py --before DIR --after DIR --row NAME [--driver threaded_sim] [--rounds 8]

DIR is a folder holding a built `torch_openreg` package (e.g. a copy of the one `tools/setup.sh` installed
before the change). Each round starts one process per build, alternating which goes first, so the machine's
noise falls on both alike.

Without --row, each process times the cases of `cases.tiny_ops` and the example's training step; the medians
and their ratio (after / before) are printed. A ratio above 1 means the change is slower.

With --row, each process is `python_suite.py --only NAME` under that build: the benchmark's own rows whose name
contains NAME (e.g. GPT, LSTM, "matmul 4x4"), each against CPU eager in a process of its own. Each run gives a
row its ratio to CPU eager (the median of its pairs' ratios, as `bazel run //bench:all` reads it); printed are
every run's ratio per build, their medians, and after / before. One run's ratio moves by a few per cent
(docs/performance.md, "How many pairs a ratio needs"): compare the ranges, not only the medians.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

from run_all import pair_ratios

HERE = os.path.dirname(os.path.abspath(__file__))
BUILDS = ("before", "after")


def build_env(package_dir, driver):
    return dict(os.environ, PYTHONPATH=package_dir, OPENREG_DRIVER=driver)


def time_in_process(package_dir, driver, calls):
    """Runs this file as a worker with `package_dir` first on the path; returns {case: seconds}."""
    output = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", str(calls)],
                            env=build_env(package_dir, driver), check=True, capture_output=True, text=True).stdout
    return json.loads(output.splitlines()[-1])


def row_ratios(suite_output):
    """{row name: ratio to its reference} from python_suite.py's output, one JSON row per line."""
    ratios = {}
    for line in suite_output.splitlines():
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        if row.get("reference"):
            ratios[row["name"]] = statistics.median(pair_ratios(row["kind"], row["openreg"], row["reference"]))
    return ratios


def rows_in_process(package_dir, driver, row, quick):
    """Runs python_suite.py --only `row` with `package_dir` first on the path; returns {row name: ratio}."""
    command = [sys.executable, os.path.join(HERE, "python_suite.py"), "--only", row] + (["--quick"] if quick else [])
    result = subprocess.run(command, env=build_env(package_dir, driver), capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"python_suite.py --only {row!r} failed under {package_dir}:\n{result.stderr}")
    ratios = row_ratios(result.stdout)
    if not ratios:
        sys.exit(f"no benchmark row with a reference has {row!r} in its name (python_suite.py --only)")
    return ratios


def alternate_builds(measure, rounds):
    """Calls measure(build) for both builds each round, the order swapped every round; returns
    {build: {name: [one value per round]}} from the {name: value} each call returns."""
    samples = {build: {} for build in BUILDS}
    for round_index in range(rounds):
        order = BUILDS if round_index % 2 == 0 else tuple(reversed(BUILDS))
        for build in order:
            for name, value in measure(build).items():
                samples[build].setdefault(name, []).append(value)
    return samples


def worker(calls):
    sys.path.insert(0, HERE)
    import torch

    import cases

    where = os.path.dirname(os.path.dirname(sys.modules["torch_openreg"].__file__))
    assert where == os.environ["PYTHONPATH"], f"torch_openreg came from {where}, not the build asked for"
    timings = {name: cases.seconds_per_call(function, calls) for name, function in cases.tiny_ops("openreg").items()}
    for name, step in cases.training_step("openreg").items():
        timings[name] = cases.seconds_per_call(step, max(3, calls // 100))
    print(json.dumps(timings))


def print_case_medians(samples, driver, rounds):
    print(f"driver {driver}, {rounds} rounds, medians in microseconds")
    print(f"{'case':40} {'before':>10} {'after':>10} {'after/before':>13}")
    for name in samples["before"]:
        before = statistics.median(samples["before"][name]) * 1e6
        after = statistics.median(samples["after"][name]) * 1e6
        print(f"{name:40} {before:10.2f} {after:10.2f} {after / before:13.3f}")


def print_row_ratios(samples, driver, rounds):
    print(f"driver {driver}, {rounds} rounds, each run's ratio to CPU eager")
    for name in samples["before"]:
        print(name)
        medians = {}
        for build in BUILDS:
            runs = samples[build][name]
            medians[build] = statistics.median(runs)
            print(f"  {build:6} median {medians[build]:.3f}  runs {' '.join(f'{r:.3f}' for r in runs)}")
        print(f"  after/before {medians['after'] / medians['before']:.3f}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        return worker(int(sys.argv[2]))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--driver", default="cpu_sim")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=3000, help="without --row: calls per case and process")
    parser.add_argument("--row", metavar="NAME", help="time the benchmark rows whose name contains NAME instead")
    parser.add_argument("--quick", action="store_true", help="with --row: python_suite.py's --quick, to check it runs")
    args = parser.parse_args()
    packages = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    for build, package in packages.items():
        if not os.path.isdir(os.path.join(package, "torch_openreg")):
            parser.error(f"--{build} {package} holds no torch_openreg package: pass the folder that contains it")
    if args.row is None:
        samples = alternate_builds(lambda build: time_in_process(packages[build], args.driver, args.calls), args.rounds)
        print_case_medians(samples, args.driver, args.rounds)
    else:
        samples = alternate_builds(lambda build: rows_in_process(packages[build], args.driver, args.row, args.quick),
                                   args.rounds)
        print_row_ratios(samples, args.driver, args.rounds)


if __name__ == "__main__":
    main()
