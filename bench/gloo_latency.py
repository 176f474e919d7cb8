"""The floor of the cross-rank check's cost: one tiny Gloo collective on CPU tensors, two ranks on 127.0.0.1.

    python bench/gloo_latency.py [--rounds 7] [--calls 300]

Times an all_gather of three int64 per rank (what core/distributed/cross_rank_check.cc exchanges), issued with
async_op=True and waited for, and with async_op=False, alternating round by round, and prints rank 0's median
microseconds per call for each. openreg is not loaded: this is Gloo alone (docs/distributed.md, "Limits").
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time


def rank_main(rank, port, rounds, calls):
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", rank=rank, world_size=2, init_method=f"tcp://127.0.0.1:{port}")
    signature = torch.tensor([1, 2, 3])
    gathered = [torch.empty(3, dtype=torch.long) for _ in range(2)]
    samples = {"async_op=True, then wait()": [], "async_op=False": []}
    for _ in range(rounds):
        for mode in samples:
            dist.barrier()
            start = time.perf_counter()
            for _ in range(calls):
                if mode == "async_op=False":
                    dist.all_gather(gathered, signature, async_op=False)
                else:
                    dist.all_gather(gathered, signature, async_op=True).wait()
            samples[mode].append((time.perf_counter() - start) / calls * 1e6)
    if rank == 0:
        for mode, values in samples.items():
            print(f"{mode:28} median {statistics.median(values):7.1f} us per call "
                  f"(rounds {min(values):.0f}-{max(values):.0f})")
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rank is not None:
        return rank_main(args.rank, args.port, args.rounds, args.calls)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, OMP_NUM_THREADS="1", TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    ranks = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--rank", str(rank), "--port", str(port),
                               "--rounds", str(args.rounds), "--calls", str(args.calls)], env=env)
             for rank in range(2)]
    try:
        codes = [rank.wait(timeout=600) for rank in ranks]
    finally:
        for rank in ranks:
            if rank.poll() is None:
                rank.kill()
    if any(codes):
        sys.exit(f"gloo_latency.py: a rank failed (exit codes {codes})")


if __name__ == "__main__":
    main()
