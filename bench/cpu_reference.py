"""CPU eager references measured in a process of their own.

A process that has run openreg must not time the CPU references its ratios are
divided by: if openreg slowed the process's CPU work (it once did, 1.5-3x, see
docs/performance.md), the reference is slowed too and every ratio looks
better than it is. `CpuReference` starts this file as a second process with
the backend not even loaded (TORCH_DEVICE_BACKEND_AUTOLOAD=0) and asks it for
one timing at a time, so that the suite still alternates openreg and
reference run by run, as the noisy shared machine needs.

Protocol: one JSON request per line on stdin, {"suite": ..., "name": ...,
"calls": n}; one JSON reply per line on stdout, {"seconds": s}. The worker
builds a suite's CPU cases with the constructors in cases.py, as the
suite does, so both processes time the same code.
"""

import json
import os
import subprocess
import sys


class CpuReference:
    """The client: times CPU cases in the worker process."""

    def __init__(self):
        env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
        self._worker = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env=env, text=True, bufsize=1)

    def seconds_per_call(self, suite, name, calls):
        self._worker.stdin.write(json.dumps({"suite": suite, "name": name, "calls": calls}) + "\n")
        reply = self._worker.stdout.readline()
        if not reply:
            raise RuntimeError(f"the CPU reference process exited (code {self._worker.wait()}) timing {suite}: {name}")
        return json.loads(reply)["seconds"]

    def close(self):
        self._worker.stdin.close()
        self._worker.wait()


def serve():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch

    import cases

    assert not hasattr(torch, "openreg"), "the reference process must not load openreg"
    built = {}
    for line in sys.stdin:
        request = json.loads(line)
        suite = request["suite"]
        if suite not in built:
            built[suite] = cases.CPU_SUITES[suite]("cpu")
        seconds = cases.seconds_per_call(built[suite][request["name"]], request["calls"])
        print(json.dumps({"seconds": seconds}), flush=True)


if __name__ == "__main__":
    serve()
