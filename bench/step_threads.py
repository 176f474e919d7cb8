"""Where a model's training step spends its threads: CPU time and context switches per step, thread by thread.

    PYTHONPATH=<package> OPENREG_DRIVER=<driver> python bench/step_threads.py [--model ResNet] [--device cpu]
        [--steps 10] [--rounds 3]

Runs one of bench/models.py's steps (the first whose name contains --model) `steps` times and synchronizes,
`rounds` times, and prints per round the wall time per step and, for every thread that ran, its CPU time and its
voluntary and involuntary context switches per step (/proc/self/task). On threaded_sim a host thread that keeps
waking while it waits for the device shows up as voluntary switches of the Python thread matched by involuntary
ones of the stream's worker, whose OpenMP team then waits for it (docs/performance.md, "Synchronize wake-ups on
threaded_sim"). Switch counts barely depend on the machine's load, unlike the times.
"""
import argparse
import os
import time

import torch

from models import MODELS


def thread_counters():
    """Per thread id: (name, CPU milliseconds, voluntary switches, involuntary switches)."""
    counters = {}
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/self/task/{tid}/status") as status:
                values = dict(line.split(":", 1) for line in status if ":" in line)
        except FileNotFoundError:  # the thread exited meanwhile
            continue
        counters[tid] = (values["Name"].strip(), (int(fields[11]) + int(fields[12])) * tick_ms,
                         int(values["voluntary_ctxt_switches"]), int(values["nonvoluntary_ctxt_switches"]))
    return counters


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="ResNet", help="part of a bench/models.py model name")
    parser.add_argument("--device", default="openreg", choices=["openreg", "cpu"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    names = [name for name in MODELS if args.model in name]
    if not names:
        parser.error(f"no model name contains {args.model!r}; the models are: {', '.join(MODELS)}")
    step = MODELS[names[0]](args.device)
    synchronize = torch.openreg.synchronize if args.device == "openreg" else (lambda: None)
    for _ in range(3):
        step()
    synchronize()
    driver = os.environ.get("OPENREG_DRIVER", "default driver") if args.device == "openreg" else "CPU eager"
    print(f"{names[0]} on {driver}, per step:")
    for _ in range(args.rounds):
        before, start = thread_counters(), time.perf_counter()
        for _ in range(args.steps):
            step()
        synchronize()
        wall_ms = (time.perf_counter() - start) * 1000 / args.steps
        after = thread_counters()
        threads = []
        for tid, (name, cpu_ms, voluntary, involuntary) in after.items():
            if tid not in before:
                continue
            _, cpu_before, voluntary_before, involuntary_before = before[tid]
            if cpu_ms > cpu_before or voluntary > voluntary_before or involuntary > involuntary_before:
                threads.append(f"{name} {(cpu_ms - cpu_before) / args.steps:.1f} ms "
                               f"({(voluntary - voluntary_before) / args.steps:.1f} voluntary, "
                               f"{(involuntary - involuntary_before) / args.steps:.1f} involuntary)")
        print(f"  {wall_ms:.1f} ms wall; " + "; ".join(threads), flush=True)


if __name__ == "__main__":
    main()
