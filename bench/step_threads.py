"""Where a model's training step spends its threads: CPU time and context switches per step, thread by thread.

    PYTHONPATH=<package> OPENREG_DRIVER=<driver> python bench/step_threads.py [--model ResNet] [--device cpu]
        [--steps 10] [--rounds 3]

Runs one of bench/models.py's steps (the first whose name contains --model) `steps` times and synchronizes,
`rounds` times, and prints per round the wall time per step and, for every thread that ran, its CPU time, the time
it was ready to run but waited for a core, and its voluntary and involuntary context switches per step
(/proc/self/task/*/schedstat and status); then all threads' CPU time against the cores' (wall time x cores). When
the threads together use every core, an OpenMP team spinning between regions included, the host's CPU time
lengthens the step by its share of the cores instead of overlapping the kernels (docs/performance.md, "Where a
threaded_sim step's CPU time goes"). On threaded_sim a host thread that keeps
waking while it waits for the device shows up as voluntary switches of the Python thread matched by involuntary
ones of the stream's worker, whose OpenMP team then waits for it (docs/performance.md, "Synchronize wake-ups on
threaded_sim"). Switch counts barely depend on the machine's load, unlike the times. The scheduler adds a running
thread's CPU time to these counters at its clock ticks, so a round must last many ticks (tens of milliseconds) for
its CPU times to mean anything.
"""
import argparse
import os
import time

import torch

from models import MODELS, model_named


def thread_counters():
    """Per thread id: (name, CPU ms, ms ready but waiting for a core, voluntary switches, involuntary switches).

    The times are the scheduler's, in ns (schedstat), not the stat file's clock ticks (10 ms here, a third of a
    model step)."""
    counters = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as schedstat:
                running_ns, waiting_ns, _ = (int(field) for field in schedstat.read().split())
            with open(f"/proc/self/task/{tid}/status") as status:
                values = dict(line.split(":", 1) for line in status if ":" in line)
        except FileNotFoundError:  # the thread exited meanwhile
            continue
        counters[tid] = (values["Name"].strip(), running_ns / 1e6, waiting_ns / 1e6,
                         int(values["voluntary_ctxt_switches"]), int(values["nonvoluntary_ctxt_switches"]))
    return counters


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="ResNet", help="part of a bench/models.py model name")
    parser.add_argument("--device", default="openreg", choices=["openreg", "cpu"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    try:
        name = model_named(args.model)
    except ValueError as error:
        parser.error(str(error))
    step = MODELS[name](args.device)
    synchronize = torch.openreg.synchronize if args.device == "openreg" else (lambda: None)
    for _ in range(3):
        step()
    synchronize()
    driver = os.environ.get("OPENREG_DRIVER", "default driver") if args.device == "openreg" else "CPU eager"
    print(f"{name} on {driver}, per step:")
    for _ in range(args.rounds):
        before, start = thread_counters(), time.perf_counter()
        for _ in range(args.steps):
            step()
        synchronize()
        wall_ms = (time.perf_counter() - start) * 1000 / args.steps
        after = thread_counters()
        threads, total_cpu_ms = [], 0.0
        for tid, (name, *counts) in after.items():
            if tid not in before:
                continue
            cpu_ms, waiting_ms, voluntary, involuntary = (
                (count - earlier) / args.steps for count, earlier in zip(counts, before[tid][1:]))
            total_cpu_ms += cpu_ms
            if cpu_ms or voluntary or involuntary:
                threads.append(f"{name} {cpu_ms:.2f} ms (waited {waiting_ms:.2f} ms for a core; "
                               f"{voluntary:.1f} voluntary, {involuntary:.1f} involuntary)")
        cores_ms = wall_ms * len(os.sched_getaffinity(0))
        print(f"  {wall_ms:.2f} ms wall, threads' CPU {total_cpu_ms:.1f} of the cores' {cores_ms:.1f} ms; "
              + "; ".join(threads), flush=True)


if __name__ == "__main__":
    main()
