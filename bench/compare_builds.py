"""Times two builds of the package side by side: did a change make openreg slower?

    python bench/compare_builds.py --before DIR --after DIR [--driver threaded_sim] [--rounds 7]

DIR is a folder holding a built `torch_openreg` package (e.g. a copy of the one `tools/setup.sh` installed
before the change). Each round starts one process per build, alternating which goes first, and times the
cases of `cases.tiny_ops` and the example's training step in each, so the machine's noise falls on both
alike; the medians and their ratio (after / before) are printed. A ratio above 1 means the change is slower.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def time_in_process(package_dir, driver, calls):
    """Runs this file as a worker with `package_dir` first on the path; returns {case: seconds}."""
    env = dict(os.environ, PYTHONPATH=package_dir, OPENREG_DRIVER=driver)
    output = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", str(calls)],
                            env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(output.splitlines()[-1])


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


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        return worker(int(sys.argv[2]))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--driver", default="cpu_sim")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    builds = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    samples = {build: {} for build in builds}
    for round_index in range(args.rounds):
        order = list(builds) if round_index % 2 == 0 else list(reversed(builds))
        for build in order:
            for name, seconds in time_in_process(builds[build], args.driver, args.calls).items():
                samples[build].setdefault(name, []).append(seconds)
    print(f"driver {args.driver}, {args.rounds} rounds, medians in microseconds")
    print(f"{'case':40} {'before':>10} {'after':>10} {'after/before':>13}")
    for name in samples["before"]:
        before = statistics.median(samples["before"][name]) * 1e6
        after = statistics.median(samples["after"][name]) * 1e6
        print(f"{name:40} {before:10.2f} {after:10.2f} {after / before:13.3f}")


if __name__ == "__main__":
    main()
