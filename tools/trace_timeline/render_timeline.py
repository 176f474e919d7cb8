"""Renders the device rows of a Chrome/Perfetto trace to a PNG timeline.

    python tools/trace_timeline/render_timeline.py TRACE.json OUT.png [--title TEXT]

TRACE.json is what torch.profiler's export_chrome_trace or
tensorboard_trace_handler writes. Every device row (one per openreg stream of
each device, named by the trace's thread_name records) becomes a lane; each
kernel, copy, memset and event record or wait on it is a bar from its start
to its end, coloured by kind, so overlap between streams is visible at a
glance. Times are in milliseconds from the first device activity.
"""

import argparse
import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Kineto's categories for device activity, and their colours.
DEVICE_CATEGORIES = {
    "kernel": "tab:blue",
    "gpu_memcpy": "tab:orange",
    "gpu_memset": "tab:green",
    "cuda_sync": "tab:gray",
}


def device_lanes(trace_events):
    """{(pid, tid): (lane name, [(start_us, duration_us, category, name)])}."""
    names = {}
    for event in trace_events:
        if event.get("ph") == "M" and event.get("name") == "thread_name":
            names[(event["pid"], event["tid"])] = event["args"]["name"]
    lanes = defaultdict(list)
    for event in trace_events:
        if event.get("ph") == "X" and event.get("cat") in DEVICE_CATEGORIES:
            lanes[(event["pid"], event["tid"])].append(
                (float(event["ts"]), float(event.get("dur", 0)), event["cat"], event["name"])
            )
    return {
        row: (f"device {row[0]}, {names.get(row, f'row {row[1]}')}", sorted(items))
        for row, items in sorted(lanes.items())
    }


def render(trace_path, png_path, title):
    with open(trace_path) as f:
        trace = json.load(f)
    lanes = device_lanes(trace.get("traceEvents", []))
    if not lanes:
        raise SystemExit(
            f"{trace_path} has no device activity (no 'kernel', 'gpu_memcpy', 'gpu_memset' or 'cuda_sync' "
            "events); profile with ProfilerActivity.PrivateUse1 on a driver that records activity"
        )
    origin = min(start for _, items in lanes.values() for start, *_ in items)
    figure, axes = plt.subplots(figsize=(12, 1.0 + 0.6 * len(lanes)))
    labels = []
    for index, (label, items) in enumerate(lanes.values()):
        labels.append(label)
        for category in DEVICE_CATEGORIES:
            bars = [((s - origin) / 1000.0, max(d, 1.0) / 1000.0) for s, d, c, _ in items if c == category]
            if bars:
                axes.broken_barh(bars, (index - 0.35, 0.7), facecolors=DEVICE_CATEGORIES[category],
                                 edgecolor="black", linewidth=0.3)
    axes.set_yticks(range(len(labels)))
    axes.set_yticklabels(labels)
    axes.invert_yaxis()
    axes.set_xlabel("time since the first device activity (ms)")
    axes.set_title(title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=color) for color in DEVICE_CATEGORIES.values()]
    axes.legend(handles, ["kernel (host function)", "copy", "memset", "event record / wait"],
                loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    axes.grid(axis="x", linestyle=":", linewidth=0.5)
    figure.tight_layout()
    figure.savefig(png_path, dpi=110)
    return len(lanes)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace", help="Chrome trace JSON from torch.profiler")
    parser.add_argument("png", help="where to write the PNG")
    parser.add_argument("--title", default="openreg device timeline", help="the figure's title")
    args = parser.parse_args(argv)
    lanes = render(args.trace, args.png, args.title)
    print(f"wrote {args.png}: {lanes} device row(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
