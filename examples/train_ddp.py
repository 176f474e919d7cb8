"""Data-parallel training of train.py's model with DistributedDataParallel, one process per rank.

    torchrun --nproc_per_node=2 examples/train_ddp.py                 # 2 ranks on openreg
    torchrun --nproc_per_node=2 examples/train_ddp.py --device cpu    # the same on the CPU with Gloo

On two machines (or as two "nodes" on one), start torchrun on each with --nnodes=2, --node_rank=0/1 and the first
machine's address as --master_addr (docs/distributed.md). Every rank takes its share of each global batch, so the
run follows the single-process run of train.py with the same global batch size. Rank r uses
openreg:<local_rank % device_count>; several ranks may share a device.
"""

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402  (the model, data and step shared with the single-process example)


def rank_device(kind: str) -> torch.device:
    """The device of this rank: openreg:<local_rank % device_count>, or the CPU."""
    if kind == "cpu":
        return torch.device("cpu")
    device = torch.device(kind, int(os.environ.get("LOCAL_RANK", "0")) % torch.openreg.device_count())
    torch.openreg.set_device(device)
    return device


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="openreg", help="openreg (default) or cpu")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=256, help="global batch size, split between the ranks")
    parser.add_argument("--max-steps", type=int, default=0, help="stop after this many steps per epoch (0: all)")
    args = parser.parse_args()

    device = rank_device(args.device)
    # No backend named: PyTorch picks openreg's for an openreg device, Gloo for the CPU.
    dist.init_process_group(backend="gloo" if device.type == "cpu" else None, device_id=device if device.type != "cpu" else None)
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} must divide by the world size {world}")
    share = args.batch_size // world

    features, labels = train.make_dataset()
    split = len(labels) * 3 // 4
    train_x, train_y = features[:split].to(device), labels[:split].to(device)
    test_x, test_y = features[split:].to(device), labels[split:].to(device)
    model = DistributedDataParallel(train.build_model().to(device))
    optimizer = train.make_optimizer(model)
    steps = (split + args.batch_size - 1) // args.batch_size
    if args.max_steps:
        steps = min(steps, args.max_steps)
    if rank == 0:
        print(f"training on {world} ranks ({device.type}): {steps} steps per epoch of {args.batch_size} samples")

    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(split, generator=torch.Generator().manual_seed(epoch)).to(device)
        epoch_loss = torch.zeros((), device=device)
        for step in range(steps):
            batch = order[step * args.batch_size:(step + 1) * args.batch_size][rank * share:(rank + 1) * share]
            epoch_loss += train.train_step(model, optimizer, train_x[batch], train_y[batch])
        dist.all_reduce(epoch_loss, op=dist.ReduceOp.AVG)
        if rank == 0:
            print(f"  epoch {epoch}: loss {epoch_loss.item() / steps:.4f}, "
                  f"test accuracy {train.accuracy(model, test_x, test_y):.3f}")
    if rank == 0:
        print(f"final test accuracy {train.accuracy(model, test_x, test_y):.3f} after "
              f"{time.perf_counter() - start:.1f} s on {world} ranks")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
