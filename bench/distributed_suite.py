"""torch.distributed on openreg against the same on CPU tensors with Gloo, world 2, in one run, on one driver.

    OPENREG_DRIVER=threaded_sim python bench/distributed_suite.py [--repeats 5] [--min-seconds 10] [--quick]

Starts two ranks on 127.0.0.1 (this script again, with RANK set). Both join one process group with Gloo for CPU
tensors and openreg's backend for openreg tensors, and alternate each openreg measurement with its CPU reference:
an all_reduce of 64 MiB, and a DDP training step of examples/train.py's model; the ranks take the larger of
their pair counts (alternation.py). Rank 0 prints one JSON row per
measurement in bench/python_suite.py's format; bench/run_all.py runs this once per driver.
"""

import argparse
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time

from alternation import DEFAULT_MIN_SECONDS, DEFAULT_REPEATS, Alternation, alternate

MiB = 2**20


def launch(script: str = __file__) -> int:
    """Runs `script` (this file, or another with the same RANK protocol) as ranks 0 and 1; prints rank 0's output."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ranks = []
    for rank in range(2):
        # One OpenMP thread per rank, as torchrun gives each of several
        # processes: otherwise two ranks' OpenMP teams fight over the cores,
        # and the result depends on libgomp's spinning more than on openreg.
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        ranks.append(subprocess.Popen([sys.executable, os.path.abspath(script), *sys.argv[1:]], env=env,
                                      stdout=subprocess.PIPE if rank == 0 else subprocess.DEVNULL))
    output, _ = ranks[0].communicate(timeout=1200)
    ranks[1].wait(timeout=60)
    sys.stdout.write(output.decode())
    return max(abs(r.returncode) for r in ranks)


def seconds_per_call(function, calls: int, sync) -> float:
    for _ in range(max(2, calls // 5)):
        function()
    sync()
    start = time.perf_counter()
    for _ in range(calls):
        function()
    sync()
    return (time.perf_counter() - start) / calls


def ddp_train_step_factory():
    """A function of a device giving one DDP training step of examples/train.py's model there, on this rank's
    half of a 256-sample batch (the process group must be initialized)."""
    from torch.nn.parallel import DistributedDataParallel

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "train.py")
    spec = importlib.util.spec_from_file_location("train_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    features, labels = example.make_dataset(num_samples=1024)

    def step_on(dev):
        model = DistributedDataParallel(example.build_model().to(dev))
        optimizer = example.make_optimizer(model)
        x, y = features[:128].to(dev), labels[:128].to(dev)
        return lambda: example.train_step(model, optimizer, x, y)

    return step_on


def rank_main(args) -> None:
    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    device = torch.device("openreg", rank % torch.openreg.device_count())
    torch.openreg.set_device(device)
    dist.init_process_group("cpu:gloo,openreg:openreg", init_method="env://")
    alternation = Alternation(2, 0.0, 2) if args.quick else Alternation(args.repeats, args.min_seconds)

    def openreg_sync():
        torch.openreg.synchronize()
        dist.barrier(device_ids=[device.index])  # both ranks start each timing together

    def cpu_sync():
        dist.barrier(device_ids=[device.index])

    def agree(count):
        largest = torch.tensor([count])
        dist.all_reduce(largest, op=dist.ReduceOp.MAX)
        return int(largest.item())

    def compare(group, name, openreg_fn, cpu_fn, calls):
        samples = alternate(lambda: seconds_per_call(openreg_fn, calls, openreg_sync),
                            lambda: seconds_per_call(cpu_fn, calls, cpu_sync), alternation, agree)
        if rank == 0:
            print(json.dumps({"group": group, "name": name, "kind": "time", "reference_name": "CPU + Gloo",
                              **samples}), flush=True)

    elements = 64 * MiB // 4
    on_device, on_cpu = torch.ones(elements, device=device), torch.ones(elements)
    compare("distributed, world 2", "all_reduce 64 MiB", lambda: dist.all_reduce(on_device),
            lambda: dist.all_reduce(on_cpu), 2 if args.quick else 10)

    step_on = ddp_train_step_factory()
    compare("distributed, world 2", "DDP train step, examples/train.py model", step_on(device),
            step_on(torch.device("cpu")), 5 if args.quick else 50)
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help="the fewest pairs a measurement takes")
    parser.add_argument("--min-seconds", type=float, default=DEFAULT_MIN_SECONDS,
                        help="a measurement takes more pairs, up to 1000, until its pairs have taken this long")
    parser.add_argument("--quick", action="store_true", help="few calls and repeats: checks that it runs")
    args = parser.parse_args()
    if "RANK" in os.environ:
        rank_main(args)
    else:
        sys.exit(launch())


if __name__ == "__main__":
    main()
