"""References measured in a process of their own.

A process must not time the references its ratios are divided by when its own
history can change their speed:
- CPU eager: if openreg slowed the process's CPU work (it once did, 1.5-3x,
  see docs/performance.md), the reference is slowed too and every ratio looks
  better than it is. Its process never loads the backend
  (TORCH_DEVICE_BACKEND_AUTOLOAD=0).
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


class ReferenceProcess:
    """The client: times the reference cases of `device` ("cpu" or "openreg") in the worker process."""

    def __init__(self, device):
        env = dict(os.environ)
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
