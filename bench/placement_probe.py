"""Where the two vCPUs were while each benchmark row ran.

On the shared 2-vCPU VM the host moves the two vCPUs between places for
minutes at a time: a cache line's round trip between them takes ~60 ns when
they share a cache and ~350 ns when they do not, and work whose threads pass
data to each other (OpenMP teams on small kernels, graph replays) then runs up
to 2x slower while single-threaded code barely moves (docs/performance.md,
"Where the vCPUs are"). bench/core_to_core_latency measures that round trip;
this runs it around every row python_suite.py prints.
"""

import json
import subprocess
import sys


class PlacementProbe:
    """Where the two vCPUs were while each row ran: core_to_core_latency (a cache line's round trip between
    CPUs 0 and 1, in ns) before and after it, as the row's "core_to_core_ns" (docs/performance.md, "Where the
    vCPUs are"). Rows are printed one after the other, so one probe ends a row and starts the next.

    A probe that fails (a machine with one CPU, say) costs the rows their placement, not the run: the first
    failure is reported on stderr, and from then on rows are printed without probing."""

    def __init__(self, binary):
        self._binary = binary
        self._last = self._probe()

    def _probe(self):
        if self._binary is None:
            return None
        nanoseconds, problem = self._run()
        if problem is None:
            return nanoseconds
        print(f"placement probe {self._binary} {problem}; the rows from here on have no core_to_core_ns",
              file=sys.stderr, flush=True)
        self._binary = None
        return None

    def _run(self):
        """(nanoseconds, None), or (None, what went wrong)."""
        try:
            result = subprocess.run([self._binary], capture_output=True, text=True)
        except OSError as error:
            return None, f"cannot be run ({error})"
        if result.returncode != 0:
            return None, f"failed (exit code {result.returncode}): {result.stderr.strip()}"
        try:
            return float(result.stdout), None
        except ValueError:
            return None, f"printed {result.stdout.strip()!r}, expected nanoseconds per round trip (a number)"

    def emit(self, row):
        """Prints `row` as a JSON line, with the probes around it while there is a probe."""
        if self._binary is not None:
            after = self._probe()
            if self._binary is not None:
                row = {**row, "core_to_core_ns": [self._last, after]}
            self._last = after
        print(json.dumps(row), flush=True)
