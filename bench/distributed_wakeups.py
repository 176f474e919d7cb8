"""Thread wake-ups of a collective and of a DDP step, per rank: openreg against CPU tensors with Gloo.

    PYTHONPATH=<package> OPENREG_DRIVER=<driver> python bench/distributed_wakeups.py [rounds]

Starts two ranks on 127.0.0.1 (OMP_NUM_THREADS=1). Each alternates, `rounds` times, 100 calls of: an all_reduce
of 87 KB (the example model's one DDP bucket) on openreg plus synchronize, the same on CPU tensors, a DDP step of
examples/train.py's model on openreg, the same on CPU. Each rank prints one JSON line: per variant the time per
call and the voluntary context switches per call (getrusage, all threads of the process), medians over rounds.
Context switches barely depend on the machine's load, unlike the times; but fewer of them is not less time when
the ones left sit on the critical path (docs/performance.md, "The DDP step: the signature check posted ahead,
tried and reverted").
"""
import json
import os
import resource
import statistics
import sys
import time

from distributed_suite import ddp_train_step_factory, launch

CALLS = 100


def rank_main() -> None:
    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    device = torch.device("openreg", 0)
    torch.openreg.set_device(device)
    dist.init_process_group("cpu:gloo,openreg:openreg", init_method="env://")
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    step_on = ddp_train_step_factory()
    bucket, cpu_bucket = torch.ones(21768, device=device), torch.ones(21768)  # the model's 21,768 parameters
    openreg_sync = torch.openreg.synchronize
    # name: (one call, what ends the timing); each all_reduce is synchronized, as a collective's latency is
    # the point, while DDP steps run back to back, as in training.
    cases = {
        "all_reduce 87 KB, openreg": (lambda: dist.all_reduce(bucket), openreg_sync),
        "all_reduce 87 KB, CPU": (lambda: dist.all_reduce(cpu_bucket), lambda: None),
        "DDP step, openreg": (step_on(device), openreg_sync),
        "DDP step, CPU": (step_on(torch.device("cpu")), lambda: None),
    }
    samples = {name: {"us": [], "context_switches": []} for name in cases}
    for _ in range(rounds):
        for name, (call, sync) in cases.items():
            for _ in range(10):
                call()
            sync()
            dist.barrier(device_ids=[device.index])
            switches = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
            start = time.perf_counter()
            for _ in range(CALLS):
                call()
                if name.startswith("all_reduce"):
                    sync()
            sync()
            elapsed = time.perf_counter() - start
            switches = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - switches
            samples[name]["us"].append(round(elapsed / CALLS * 1e6, 1))
            samples[name]["context_switches"].append(round(switches / CALLS, 2))
            dist.barrier(device_ids=[device.index])
    row = {name: {"us_median": statistics.median(s["us"]), "context_switches_median":
                  statistics.median(s["context_switches"]), **s} for name, s in samples.items()}
    print(json.dumps({"rank": rank, "driver": os.environ.get("OPENREG_DRIVER"), **row}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    if "RANK" in os.environ:
        rank_main()
    else:
        sys.exit(launch(__file__))
