"""Profiles the two-stream overlap case of bench/python_suite.py and writes its trace.

    OPENREG_DRIVER=threaded_sim python tools/trace_timeline/two_stream_trace.py TRACE.json

16 matmuls of 768x768, alternating between two streams, with one intra-op
thread per kernel, as the benchmark runs them; render the result with
render_timeline.py.
"""

import sys

import torch
import torch_openreg  # noqa: F401
from torch.profiler import ProfilerActivity, profile


def main(argv):
    if len(argv) != 1:
        raise SystemExit(__doc__)
    torch.set_num_threads(1)
    a = torch.randn(768, 768, device="openreg")
    streams = [torch.openreg.Stream(), torch.openreg.Stream()]
    for stream in streams:  # warm-up: starts each stream's worker
        with torch.openreg.stream(stream):
            a @ a
    torch.openreg.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        for i in range(16):
            with torch.openreg.stream(streams[i % 2]):
                a @ a
        torch.openreg.synchronize()
    prof.export_chrome_trace(argv[0])
    print(f"wrote {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
