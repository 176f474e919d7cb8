"""Records openreg's memory history while examples/train.py's model trains for
a few steps, saves the snapshot, and draws its active memory timeline.

    python examples/memory_snapshot.py                      # snapshot.pickle, memory_timeline.png
    python examples/memory_snapshot.py --steps 5 --out-dir /tmp/snap

Open snapshot.pickle at https://pytorch.org/memory_viz (drag and drop) for the
interactive views, or with `python -m torch.cuda._memory_viz trace
snapshot.pickle`. The PNG needs matplotlib. docs/memory_snapshots.md explains
what is recorded.
"""

import argparse
import os
import pickle
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402  (the example next to this file)


def record(steps: int, batch_size: int) -> dict:
    """The snapshot after `steps` training steps recorded from the start."""
    torch.openreg.memory._record_memory_history(stacks="python", max_entries=100_000)
    features, labels = train.make_dataset()
    x, y = features.to("openreg"), labels.to("openreg")
    model = train.build_model().to("openreg")
    optimizer = train.make_optimizer(model)
    for step in range(steps):
        batch = slice(step * batch_size, (step + 1) * batch_size)
        train.train_step(model, optimizer, x[batch], y[batch])
    torch.openreg.synchronize()
    snapshot = torch.openreg.memory._snapshot()
    torch.openreg.memory._record_memory_history(enabled=None)
    return snapshot


def _category(frames: list) -> str:
    """What an allocation was for, from its innermost frame in the example."""
    for frame in frames:
        if frame["filename"].endswith("train.py") or frame["filename"].endswith("memory_snapshot.py"):
            return f"{frame['name']} (line {frame['line']})"
    return "autograd backward (no Python frames)" if not frames else "other"


def timeline(snapshot: dict, device: int = 0):
    """Live allocations stacked in allocation order after each trace entry:
    (bands, totals), each band (category, start, end, offsets by step)."""
    live = []  # [address, size, category, start, offsets]
    bands, totals = [], []
    for step, entry in enumerate(snapshot["device_traces"][device]):
        if entry["action"] == "alloc":
            live.append([entry["addr"], entry["size"], _category(entry["frames"]), step, []])
        elif entry["action"] == "free_completed":
            for index, item in enumerate(live):
                if item[0] == entry["addr"]:
                    bands.append((item[2], item[3], step, item[4], item[1]))
                    del live[index]
                    break
        offset = 0
        for item in live:
            item[4].append(offset)
            offset += item[1]
        totals.append(offset)
    end = len(totals)
    bands.extend((item[2], item[3], end, item[4], item[1]) for item in live)
    return bands, totals


def draw(snapshot: dict, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("drawing the timeline needs matplotlib (pip install matplotlib); "
                 "the snapshot itself opens at https://pytorch.org/memory_viz")
    bands, totals = timeline(snapshot)
    categories = sorted({band[0] for band in bands})
    colors = {name: plt.cm.tab20(i % 20) for i, name in enumerate(categories)}
    figure, axes = plt.subplots(figsize=(11, 5))
    kib = 1024
    for name, start, end, offsets, size in bands:
        steps = list(range(start, start + len(offsets)))
        bottom = [o / kib for o in offsets]
        top = [(o + size) / kib for o in offsets]
        axes.fill_between(steps, bottom, top, step="post", color=colors[name], linewidth=0)
    for name in categories:
        axes.fill_between([], [], [], color=colors[name], label=name)
    axes.plot(range(len(totals)), [t / kib for t in totals], color="black", linewidth=0.6)
    axes.set_xlabel("allocator action (trace entry)")
    axes.set_ylabel("active memory (KiB)")
    axes.set_title("openreg:0 active memory while training examples/train.py's MLP")
    axes.legend(loc="upper left", fontsize=7, ncol=2)
    axes.margins(x=0)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--out-dir", default=".")
    args = parser.parse_args()
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    os.makedirs(args.out_dir, exist_ok=True)
    snapshot = record(args.steps, args.batch_size)
    pickle_path = os.path.join(args.out_dir, "snapshot.pickle")
    with open(pickle_path, "wb") as f:
        pickle.dump(snapshot, f)
    png_path = os.path.join(args.out_dir, "memory_timeline.png")
    draw(snapshot, png_path)
    print(f"wrote {pickle_path} ({len(snapshot['device_traces'][0])} trace entries) and {png_path}")


if __name__ == "__main__":
    main()
