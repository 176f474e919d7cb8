"""Side-by-side timings of openreg against CPU eager, in one process.

    OPENREG_DRIVER=threaded_sim python bench/compare_with_cpu.py [--repeats 7]

Each measurement alternates CPU and openreg runs and reports the median of
the repeats and the ratio openreg / CPU (lower is better; 1.0 means no
overhead). The machine is shared and noisy, so only ratios measured together
mean anything. The driver is whichever OPENREG_DRIVER selects. Last comes
stream overlap: the same compute-bound work on one openreg stream and split
over two, with one intra-op thread per kernel (speed-up, higher is better).
"""

import argparse
import importlib.util
import os
import statistics
import time

import torch


def load_example():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "train.py")
    spec = importlib.util.spec_from_file_location("train_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def synchronize(device: str) -> None:
    if device == "openreg":
        torch.openreg.synchronize()


def time_per_call(function, device: str, calls: int) -> float:
    """Seconds per call of function(), after a warm-up."""
    for _ in range(max(3, calls // 10)):
        function()
    synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        function()
    synchronize(device)
    return (time.perf_counter() - start) / calls


def tiny_ops(device: str):
    a = torch.ones(16, device=device)
    b = torch.ones(4, 4, device=device)
    return {
        "tiny add (16 floats)": lambda: a + a,
        "tiny matmul (4x4)": lambda: b @ b,
        "view": lambda: b.view(16),
        "in-place mul_": lambda: a.mul_(1.0),
    }


def allocations(device: str):
    # Creating and dropping a tensor: a cache hit of openreg's caching
    # allocator against PyTorch's CPU allocator (malloc).
    return {
        "empty+drop 1 KiB tensor": lambda: torch.empty(256, device=device),
        "empty+drop 64 MiB tensor": lambda: torch.empty(16 * 2**20, device=device),
    }


def large_ops(device: str):
    x = torch.randn(1024, 1024).to(device)
    image = torch.randn(8, 16, 64, 64).to(device)
    weight = torch.randn(32, 16, 3, 3).to(device)
    return {
        "matmul 1024^2": lambda: x @ x,
        "conv2d 8x16x64x64": lambda: torch.nn.functional.conv2d(image, weight, padding=1),
        "softmax 1024^2": lambda: x.softmax(dim=1),
    }


def training_step(device: str):
    example = load_example()
    features, labels = example.make_dataset(num_samples=1024)
    model = example.build_model().to(device)
    optimizer = example.make_optimizer(model)
    x, y = features[:256].to(device), labels[:256].to(device)
    return {"train step (examples/train.py model)": lambda: example.train_step(model, optimizer, x, y)}


def stream_overlap(repeats: int) -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a = torch.randn(768, 768, device="openreg")
        streams = [torch.Stream(device="openreg") for _ in range(2)]

        def run(stream_count: int) -> float:
            outputs = []
            torch.openreg.synchronize()
            start = time.perf_counter()
            for i in range(16):
                with streams[i % stream_count]:
                    outputs.append(a @ a)
            torch.openreg.synchronize()
            return time.perf_counter() - start

        run(2)
        speedups = sorted(run(1) / run(2) for _ in range(repeats))
    finally:
        torch.set_num_threads(threads)
    print(f"{'two-stream overlap speed-up (16 matmuls 768^2)':52s} {statistics.median(speedups):6.2f}x"
          f"  {speedups[0]:.2f}-{speedups[-1]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"driver: {torch.openreg.driver_info().name}, torch threads: {torch.get_num_threads()}")
    print(f"{'measurement':40s} {'cpu':>12s} {'openreg':>12s} {'ratio':>7s}  spread")
    for suite, calls in ((tiny_ops, 2000), (allocations, 5000), (large_ops, 10), (training_step, 50)):
        per_device = {device: suite(device) for device in ("cpu", "openreg")}
        for name in per_device["cpu"]:
            samples = {"cpu": [], "openreg": []}
            for _ in range(args.repeats):
                for device in ("cpu", "openreg"):
                    samples[device].append(time_per_call(per_device[device][name], device, calls))
            cpu, openreg = statistics.median(samples["cpu"]), statistics.median(samples["openreg"])
            ratios = sorted(o / c for o, c in zip(samples["openreg"], samples["cpu"]))
            print(f"{name:40s} {cpu * 1e6:10.1f}us {openreg * 1e6:10.1f}us {openreg / cpu:6.2f}x"
                  f"  {ratios[0]:.2f}-{ratios[-1]:.2f}")
    stream_overlap(args.repeats)


if __name__ == "__main__":
    main()
