"""The first training step of a fresh process, on one device.

    python bench/first_step.py DEVICE [--detail]

Builds the example's model, optimizer and a batch on DEVICE, then times the
first training step (with the device synchronized before and after) and
prints {"seconds": s} as one JSON line. The first step pays everything a
process does once: kernels looked up and their caches filled, the caching
allocator's first segments, the driver's stream workers started, the
autograd engine's device threads. python_suite.py starts this file in a new
process per sample, alternating openreg and CPU (the CPU run with the
backend not even loaded), so each sample is a truly fresh process.

With --detail the line also splits the step into the host's part (the
step's Python returning) and the final synchronize, and names the threads
the step started: a slow synchronize with a new OpenMP worker in it is what
Note [OpenMP width of driver threads] describes.
"""

import argparse
import json
import time

import cases
from step_threads import thread_counters


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("device", choices=["openreg", "cpu"])
    parser.add_argument("--detail", action="store_true",
                        help="also the host's part, the final synchronize and the threads the step started")
    args = parser.parse_args()
    example = cases.load_example()
    features, labels = example.make_dataset(num_samples=1024)
    model = example.build_model().to(args.device)
    optimizer = example.make_optimizer(model)
    x, y = features[:256].to(args.device), labels[:256].to(args.device)
    cases.synchronize()
    threads_before = thread_counters()
    start = time.perf_counter()
    example.train_step(model, optimizer, x, y)
    host_done = time.perf_counter()
    cases.synchronize()
    end = time.perf_counter()
    result = {"seconds": end - start}
    if args.detail:
        started = [counters[0] for tid, counters in thread_counters().items() if tid not in threads_before]
        result.update(host_seconds=host_done - start, synchronize_seconds=end - host_done,
                      threads_started=sorted(started))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
