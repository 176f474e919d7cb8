"""openreg against its reference, side by side in one run, on one driver.

    OPENREG_DRIVER=threaded_sim python bench/python_suite.py [--repeats 5] [--min-seconds 10] [--quick] [--only NAME]

Prints one JSON object per measurement on stdout: group, name, kind ("time":
seconds per call, or "speedup"), reference_name, and the per-pair samples
of "openreg" and "reference". Each measurement alternates
runs of the openreg case and of its reference (CPU eager for compute and
allocation, memcpy for copies, eager openreg or compiled CPU for compiled
steps) and keeps every pair, so the caller can
report medians and spreads of ratios measured together: the machine is
shared and noisy, and only ratios from one run mean anything. CPU eager is
timed in a second process that never loads openreg, and the eager openreg
step that graph replays and compiled steps are divided by in a third one
that never replays a graph (reference_process.py), so nothing done to this
process can flatter the ratios; the "host CPU" row measures such an effect.
bench/run_all.py (`bazel run //bench:all`) runs this once per driver.
"""

import argparse
import contextlib
import ctypes
import dataclasses
import functools
import json
import os
import subprocess
import sys
import time

import torch

from alternation import DEFAULT_MIN_SECONDS, DEFAULT_REPEATS, Alternation, alternate
from cases import (CPU_SUITES, MiB, compiled_training_step, compiled_transformer_block, graph_replays,
                   seconds_per_call, small_mlp_adam)
from placement_probe import PlacementProbe
from reference_process import ReferenceProcess, run_with_malloc_keeping_freed_memory
from models import CALLS, DEFAULT_CALLS

HERE = os.path.dirname(os.path.abspath(__file__))


# The model rows alternate three times as long as the others: threaded_sim's sit within 1-2 % of their target
# (<= 1.00x), and the median of ten pairs, one per second, moves by about 3 % from run to run (docs/performance.md,
# "Where a threaded_sim step's CPU time goes").
MODEL_ROWS_TIME_FACTOR = 3


def compare(group, name, openreg_fn, reference_fn, reference, calls, alternation):
    """A measurement: the openreg case and its reference, alternating (alternation.py)."""
    samples = alternate(lambda: seconds_per_call(openreg_fn, calls), lambda: reference_fn(calls), alternation)
    return {"group": group, "name": name, "kind": "time", "reference_name": reference, **samples}


def compiled_rows(eager, calls, alternation):
    """The torch.compile rows: compiled openreg against eager openreg (timed by `eager`, a ReferenceProcess) and
    compiled CPU.

    The compiled CPU references are timed in this process, not in the CPU
    reference process: there (2026-11-23) they took 5-10x their time here
    (compiled train step 26.9 ms against 2.4 ms) while its eager references
    did not, which is not understood yet (docs/performance.md).
    """
    def in_process(step):
        return lambda n: seconds_per_call(step, n)

    compiled_step = compiled_training_step("openreg")
    eager_step = functools.partial(eager.seconds_per_call, "compiled", "train step")
    yield compare("compiled", "train step vs eager openreg", compiled_step, eager_step, "openreg eager", calls(50),
                  alternation)
    yield compare("compiled", "train step, reduce-overhead (graph replay) vs eager openreg",
                  compiled_training_step("openreg", mode="reduce-overhead"), eager_step, "openreg eager", calls(50),
                  alternation)
    yield compare("compiled", "train step vs compiled CPU", compiled_step,
                  in_process(compiled_training_step("cpu")), "CPU compiled", calls(50), alternation)
    yield compare("compiled", "transformer block fwd+bwd vs compiled CPU", compiled_transformer_block("openreg"),
                  in_process(compiled_transformer_block("cpu")), "CPU compiled", calls(20), alternation)


# Process pairs the "host CPU" row pools: one pair's median has a bias of its own, which no number of samples
# from that pair averages out (two processes that never loaded openreg read 0.994-1.017x, and pairs of 5 s moved
# by up to 8 % whatever the process had run before: docs/performance.md, "Where a threaded_sim step's CPU time
# goes").
HOST_CPU_PROCESS_PAIRS = 3


def host_cpu(cpu, calls, alternation, process_pairs, start_process=ReferenceProcess):
    """CPU work in a process that used openreg against the same work in one that never loaded it.

    The samples of `process_pairs` pairs of processes, pooled, each pair
    alternating for its share of the row's time: this process, which has run
    every row before, against `cpu`; then fresh pairs, each a process that
    trained the same model on openreg for 100 steps (cases.cpu_step_after_openreg,
    issue 17's recipe) against a new one that never loaded openreg, both
    started by `start_process(device)` (a ReferenceProcess) and closed after
    their share, whatever happens.
    """
    in_this_process = small_mlp_adam("cpu")
    [name] = in_this_process
    share = Alternation(alternation.repeats, alternation.min_seconds / process_pairs, alternation.max_pairs)
    samples = alternate(lambda: seconds_per_call(in_this_process[name], calls),
                        lambda: cpu.seconds_per_call("host CPU", name, calls), share)
    for _ in range(process_pairs - 1):
        with contextlib.ExitStack() as processes:
            used = start_process("openreg")
            processes.callback(used.close)
            fresh = start_process("cpu")
            processes.callback(fresh.close)
            pair = alternate(lambda: used.seconds_per_call("host CPU", name, calls),
                             lambda: fresh.seconds_per_call("host CPU", name, calls), share)
        for side in samples:
            samples[side] += pair[side]
    return {"group": "host CPU", "name": f"{name}, after openreg ran ({process_pairs} process pairs)", "kind": "time",
            "reference_name": "CPU eager, fresh process", **samples}


def first_step_seconds(device):
    """Runs first_step.py in a new process; the CPU one never loads openreg."""
    env = dict(os.environ)
    if device == "cpu":
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    output = subprocess.run([sys.executable, os.path.join(HERE, "first_step.py"), device], env=env, check=True,
                            capture_output=True, text=True).stdout
    return json.loads(output.splitlines()[-1])["seconds"]


def first_step(alternation):
    """The first training step of a fresh process, openreg against CPU eager, alternating processes."""
    samples = alternate(lambda: first_step_seconds("openreg"), lambda: first_step_seconds("cpu"), alternation)
    return {"group": "first step", "name": "first training step of a fresh process, examples/train.py model",
            "kind": "time", "reference_name": "CPU eager, fresh process", **samples}


def copies(size):
    """Copies of `size` bytes against memcpy of the same size (libc, one thread)."""
    count = size // 4
    pageable = torch.randn(count)
    pinned = torch.randn(count).pin_memory()
    device_a = torch.randn(count, device="openreg")
    device_b = torch.empty(count, device="openreg")
    host_a, host_b = torch.randn(count), torch.empty(count)
    memcpy = ctypes.CDLL(None).memcpy
    memcpy.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)

    def reference():
        memcpy(host_b.data_ptr(), host_a.data_ptr(), size)

    return reference, {
        "host->device, pageable, blocking": lambda: device_b.copy_(pageable),
        "host->device, pinned, non-blocking": lambda: device_b.copy_(pinned, non_blocking=True),
        "device->host, pageable, blocking": lambda: pageable.copy_(device_a),
        "device->host, pinned, non-blocking": lambda: pinned.copy_(device_a, non_blocking=True),
        "device->device": lambda: device_b.copy_(device_a),
    }


def stream_overlap(alternation):
    """Speed-up of splitting the same matmuls over two streams (one thread per kernel)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a = torch.randn(768, 768, device="openreg")
        streams = [torch.Stream(device="openreg") for _ in range(2)]

        def run(stream_count):
            torch.openreg.synchronize()
            start = time.perf_counter()
            for i in range(16):
                with streams[i % stream_count]:
                    a @ a
            torch.openreg.synchronize()
            return time.perf_counter() - start

        run(2)
        samples = alternate(lambda: run(2), lambda: run(1), alternation)
    finally:
        torch.set_num_threads(threads)
    # The speed-up is the reference (one stream) over openreg (two streams).
    return {"group": "streams", "name": "two-stream overlap, 16 matmuls 768^2", "kind": "speedup",
            "reference_name": "one stream", **samples}


PROFILING_ROW = "tiny op a + a, profiling with device activity"


def profiling_overhead(calls, alternation):
    """A tiny op while torch.profiler records device activity, against CPU-only profiling (docs/profiling.md)."""
    from torch.profiler import ProfilerActivity, profile

    a = torch.randn(16, device="openreg")

    def tiny():
        a + a

    def profiled(activities):
        with profile(activities=activities):
            seconds = seconds_per_call(tiny, calls)
            torch.openreg.synchronize()
        return seconds

    samples = alternate(lambda: profiled([ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]),
                        lambda: profiled([ProfilerActivity.CPU]), alternation)
    return {"group": "profiler", "name": PROFILING_ROW, "kind": "time",
            "reference_name": "CPU-only profiling", **samples}


def main():
    run_with_malloc_keeping_freed_memory()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help="the fewest pairs a measurement takes")
    parser.add_argument("--min-seconds", type=float, default=DEFAULT_MIN_SECONDS,
                        help="a measurement takes more pairs, up to 1000, until its pairs have taken this long")
    parser.add_argument("--quick", action="store_true", help="few calls and repeats: checks that it runs")
    parser.add_argument("--placement-probe", metavar="BINARY",
                        help="bench/core_to_core_latency, run around every row to record where the vCPUs were")
    parser.add_argument("--only", metavar="NAME",
                        help="run only the CPU-eager rows and the profiler row whose name contains NAME (e.g. LSTM, "
                        "profiling), nothing else")
    args = parser.parse_args()
    alternation = Alternation(2, 0.0, 2) if args.quick else Alternation(args.repeats, args.min_seconds)
    scale = 0.02 if args.quick else 1.0

    def calls(n):
        return max(2, int(n * scale))

    probe = PlacementProbe(args.placement_probe)
    cpu = ReferenceProcess("cpu")
    suites = [("tiny ops", 2000), ("allocation", 3000), ("large compute", 10), ("training", 50), ("models", None)]
    for group, n in suites:
        for name, openreg_fn in CPU_SUITES[group]("openreg").items():
            if args.only is not None and args.only not in name:
                continue
            row_alternation = alternation
            if group == "models":
                n = CALLS.get(name, DEFAULT_CALLS)
                row_alternation = dataclasses.replace(
                    alternation, min_seconds=alternation.min_seconds * MODEL_ROWS_TIME_FACTOR)
            row = compare(group, name, openreg_fn, functools.partial(cpu.seconds_per_call, group, name), "CPU eager",
                          calls(n if "2048" not in name else n // 4), row_alternation)
            probe.emit(row)
    if args.only is not None:
        cpu.close()
        if args.only in PROFILING_ROW:
            probe.emit(profiling_overhead(calls(2000), alternation))
        return
    probe.emit(first_step(alternation))
    probe.emit(host_cpu(cpu, calls(300), alternation, 2 if args.quick else HOST_CPU_PROCESS_PAIRS))
    cpu.close()
    eager = ReferenceProcess("openreg")
    for row in compiled_rows(eager, calls, alternation):
        probe.emit(row)
    for name, replay in graph_replays().items():
        row = compare("graphs", f"{name}: replay vs eager", replay,
                      functools.partial(eager.seconds_per_call, "graphs", name),
                      "openreg eager, a process that never replays", calls(200), alternation)
        probe.emit(row)
    eager.close()
    reference_fn, cases = copies(64 * MiB)
    for name, fn in cases.items():
        row = compare("copies, 64 MiB", name, fn, lambda n: seconds_per_call(reference_fn, n), "memcpy", calls(20),
                      alternation)
        probe.emit(row)
    probe.emit(stream_overlap(alternation))
    probe.emit(profiling_overhead(calls(2000), alternation))


if __name__ == "__main__":
    main()
