"""The first training step of a fresh process, on one device.

    python bench/first_step.py DEVICE

Builds the example's model, optimizer and a batch on DEVICE, then times the
first training step (with the device synchronized before and after) and
prints {"seconds": s} as one JSON line. The first step pays everything a
process does once: kernels looked up and their caches filled, the caching
allocator's first segments, the driver's stream workers started, the
autograd engine's device threads. python_suite.py starts this file in a new
process per sample, alternating openreg and CPU (the CPU run with the
backend not even loaded), so each sample is a truly fresh process.
"""

import json
import sys
import time

import torch

import cases


def main():
    device = sys.argv[1]
    example = cases.load_example()
    features, labels = example.make_dataset(num_samples=1024)
    model = example.build_model().to(device)
    optimizer = example.make_optimizer(model)
    x, y = features[:256].to(device), labels[:256].to(device)
    cases.synchronize()
    start = time.perf_counter()
    example.train_step(model, optimizer, x, y)
    cases.synchronize()
    print(json.dumps({"seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
