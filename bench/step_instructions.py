"""A model's training step counted by callgrind, on openreg and on CPU eager: instructions and first-level cache
misses per step, which the machine's load does not move.

    python bench/step_instructions.py [--model MLP] [--package DIR] [--driver cpu_sim] [--counts 5 25]

Runs one of bench/models.py's steps (the first whose name contains --model) N1 and N2 times in fresh processes
under `valgrind --tool=callgrind --cache-sim=yes`, on openreg and on the CPU, and prints per step
(I(N2) - I(N1)) / (N2 - N1) for each event: start-up and model building cancel out. Each process runs the
step five times first. Few counted steps do not average out work that one run does once and the other does
not (a cache still filling, a garbage collection): with --counts 1 3 the MLP read 1.1 M instructions a step
more on openreg than on the CPU, with the default 5 25 84k fewer. Keep the defaults or larger counts.

Why the cache misses: a tight loop of one op keeps openreg's code in the instruction cache, so op_instructions.py
and the tiny-op rows see the per-op path's instructions only. A model step runs dozens of different ops between
Python and libtorch, and the per-op path's code is fetched anew for many of them. Callgrind simulates a
first-level instruction cache of this host's size (32 KiB) and counts those fetches. With both devices on the
for-loop optimizer, openreg's MLP step ran 2.8 % more instructions than CPU eager's and 8.6 % more such misses
(docs/performance.md, "The MLP step on cpu_sim").

The step is the bench's own, so the optimizer is torch's default for each device: foreach on openreg, the
for-loop on the CPU. One OpenMP thread. Needs valgrind (`apt-get install valgrind`); the MLP takes about two
minutes per process, two processes at a time.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

import models
from reference_process import MALLOC_KEEPS_FREED_MEMORY

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = """
import sys
sys.path.insert(0, {bench!r})
import torch
import models
device, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
step = models.MODELS[name](device)
sync = torch.openreg.synchronize if device == "openreg" else (lambda: None)
for _ in range(5):
    step()
sync()
for _ in range(n):
    step()
sync()
"""

# The events callgrind's cache simulation counts, and what this prints them as.
EVENTS = {"Ir": "instructions", "I1mr": "instruction-cache misses", "D1mr": "data read misses",
          "D1mw": "data write misses"}


def counted(device, name, steps, package, driver):
    """{event: count} of a whole run of `steps` steps."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENREG_DRIVER=driver,
               # valgrind cannot reserve the address space of the default device memory.
               OPENREG_DEVICE_MEMORY="512MiB",
               # The suite's malloc settings: freed memory stays in the process.
               **MALLOC_KEEPS_FREED_MEMORY)
    if package:
        env["PYTHONPATH"] = os.path.abspath(package)
    if device == "cpu":
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    command = ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--callgrind-out-file=/dev/null",
               sys.executable, "-c", WORKER.format(bench=HERE), device, name, str(steps)]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    events = collected_events(result.stderr)
    if result.returncode != 0 or events is None:
        sys.exit(f"step_instructions.py: the counted run on {device} failed:\n{result.stderr[-2000:]}")
    return events


def collected_events(stderr):
    """{event: count} from callgrind's closing "Events" and "Collected" lines, or None without them."""
    names = re.search(r"Events\s*:\s*(.+)", stderr)
    values = re.search(r"Collected\s*:\s*(.+)", stderr)
    if names is None or values is None:
        return None
    return dict(zip(names.group(1).split(), (int(value) for value in values.group(1).split())))


def per_step(totals, low, high):
    """{device: {event: count per step}} from the whole runs' totals, keyed by (device, steps)."""
    devices = sorted({device for device, _ in totals})
    return {device: {event: (totals[(device, high)][event] - totals[(device, low)][event]) / (high - low)
                     for event in EVENTS}
            for device in devices}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="MLP", help="part of a bench/models.py model name")
    parser.add_argument("--package", metavar="DIR", help="a folder holding the torch_openreg build to count")
    parser.add_argument("--driver", default="cpu_sim")
    parser.add_argument("--counts", type=int, nargs=2, default=[5, 25], metavar=("N1", "N2"))
    args = parser.parse_args()
    low, high = args.counts
    if not 0 <= low < high:
        parser.error(f"--counts needs 0 <= N1 < N2, got {low} {high}")
    try:
        name = models.model_named(args.model)
    except ValueError as error:
        parser.error(str(error))
    runs = [(device, steps) for device in ("cpu", "openreg") for steps in (low, high)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        totals = dict(zip(runs, pool.map(lambda run: counted(run[0], name, run[1], args.package, args.driver),
                                         runs)))
    counts = per_step(totals, low, high)
    print(f"{name}, per step (callgrind, one OpenMP thread, openreg on {args.driver}):")
    print(f"  {'':26} {'CPU eager':>12} {'openreg':>12} {'openreg - CPU':>14}")
    for event, label in EVENTS.items():
        cpu, openreg = counts["cpu"][event], counts["openreg"][event]
        print(f"  {label:26} {cpu:12,.0f} {openreg:12,.0f} {openreg - cpu:+14,.0f}")


if __name__ == "__main__":
    main()
