"""References measured in a process of their own.

A process must not time the references its ratios are divided by when its own
history can change their speed:
- CPU eager: if openreg slowed the process's CPU work (it once did, 1.5-3x,
  see docs/performance.md), the reference is slowed too and every ratio looks
  better than it is. Its process never loads the backend
  (TORCH_DEVICE_BACKEND_AUTOLOAD=0). Nor does it pay for glibc's malloc
  handing large tensors back to the kernel: with its default threshold a
  4 MiB conv2d output was mapped and faulted in anew on every call, 5.2 ms
  against 1.7 ms with the memory kept (openreg's caching allocator keeps
  its memory, so the ratio flattered it 3x), and whether that happened
  depended on what the process had allocated before. Both thresholds are
  fixed high (MALLOC_MMAP_THRESHOLD_, and MALLOC_TRIM_THRESHOLD_: alone, the
  first moves the faults to the top of the heap, given back at each free),
  so CPU eager keeps its freed memory too, in every process of the suite
  (python_suite.py re-executes itself with them), so that the "host CPU"
  row compares processes that differ only in openreg.
- openreg eager, for the graph-replay and compiled rows: replaying a graph on
  threaded_sim gives back the replaying thread's OpenMP pool, after which
  OpenMP barriers spin and eager steps in that process took 1.5-2.2 ms
  against 1.0-1.2 ms in one that never replayed (docs/graphs.md). Its process
  loads openreg but only ever runs eager work.

`ReferenceProcess(device)` starts this file as that second process and asks
it for one timing at a time, so that the suite still alternates openreg and
reference run by run, as the noisy shared machine needs.

Protocol: one JSON request per line on stdin, {"suite": ..., "name": ...,
"calls": n}; one JSON reply per line on stdout, {"seconds": s}. The worker
builds a suite's cases with the constructors in cases.py (REFERENCE_SUITES),
as the suite does, so both processes time the same code.
"""

import json
import os
import subprocess
import sys


# glibc malloc settings of every process of the suite (see above); glibc reads them at start.
MALLOC_KEEPS_FREED_MEMORY = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}


def run_with_malloc_keeping_freed_memory():
    """Re-executes this process with MALLOC_KEEPS_FREED_MEMORY unless it already runs with it."""
    if all(os.environ.get(name) == value for name, value in MALLOC_KEEPS_FREED_MEMORY.items()):
        return
    os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, **MALLOC_KEEPS_FREED_MEMORY})


class ReferenceProcess:
    """The client: times the reference cases of `device` ("cpu" or "openreg") in the worker process."""

    def __init__(self, device):
        env = {**os.environ, **MALLOC_KEEPS_FREED_MEMORY}
        if device == "cpu":
            env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
        self._device = device
        self._worker = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), device], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env=env, text=True, bufsize=1)

    def seconds_per_call(self, suite, name, calls):
        self._worker.stdin.write(json.dumps({"suite": suite, "name": name, "calls": calls}) + "\n")
        reply = self._worker.stdout.readline()
        if not reply:
            raise RuntimeError(f"the {self._device} reference process exited (code {self._worker.wait()}) timing "
                               f"{suite}: {name}")
        return json.loads(reply)["seconds"]

    def close(self):
        self._worker.stdin.close()
        self._worker.wait()


def serve(device):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch

    import cases

    if device == "cpu":
        assert not hasattr(torch, "openreg"), "the CPU reference process must not load openreg"
    built = {}
    for line in sys.stdin:
        request = json.loads(line)
        suite = request["suite"]
        if suite not in built:
            built[suite] = cases.REFERENCE_SUITES[device][suite](device)
        seconds = cases.seconds_per_call(built[suite][request["name"]], request["calls"])
        print(json.dumps({"seconds": seconds}), flush=True)


if __name__ == "__main__":
    serve(sys.argv[1])
