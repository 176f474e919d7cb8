"""Where a tiny op's time goes, thread by thread: perf's samples of a steady loop, in nanoseconds per op.

    python bench/op_profile.py [--op add] [--device openreg] [--driver threaded_sim] [--package DIR]
        [--seconds 6] [--frequency 4000] [--top 15]

Runs the op in a loop in a fresh process, attaches `perf record -e cpu-clock` to it for `seconds` once 20,000 ops
have warmed it up, and prints, for every thread that ran, its time per op and the symbols it spent it in. The launching thread is
the Python thread with the most samples ("launching"); other threads are named as the kernel knows them
(`openreg_stream` for threaded_sim's workers). Samples are of the time a thread was on a core, so a thread that
polls shows as busy; a function that waits for a cache line another core holds shows as slow, which is what this
is for: with the two threads on cores that share no cache, threaded_sim's hand-off costs the launching thread about
1 µs per op, and this shows in which functions (docs/performance.md, "Where the launching thread's time goes on
threaded_sim's tiny add"). Instruction counts, which the host's placement does not move, are op_instructions.py's.
Needs perf (`apt-get install linux-perf`) and permission to attach to one's own processes
(kernel.perf_event_paranoid <= 2, the default).
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

from op_instructions import OPERANDS, OPS

LAUNCHING = "launching"

WORKER = """
import sys, time, torch
device, seconds = sys.argv[1], float(sys.argv[2])
""" + OPERANDS + """
op = lambda: {expression}
sync = torch.openreg.synchronize if device == "openreg" else (lambda: None)
for _ in range(20000):
    op()
sync()
print("ready", flush=True)
ops, start = 0, time.perf_counter()
while time.perf_counter() - start < seconds:
    for _ in range(1000):
        op()
    ops += 1000
sync()
print(ops, time.perf_counter() - start, flush=True)
"""

# A line of `perf report --sort pid,sym -F period,pid,sym --stdio`: the period (ns of cpu-clock), the thread
# ("tid:name") and the symbol after its [.] or [k] mark.
REPORT_LINE = re.compile(r"\s*(\d+)\s+(\d+):(.*?)\s+\[[.k]\]\s+(.*\S)")


def parse_report(text):
    """(period in ns, thread id, thread name, symbol) for every sample line of a perf report."""
    rows = []
    for line in text.splitlines():
        match = REPORT_LINE.match(line)
        if match:
            period, tid, name, symbol = match.groups()
            rows.append((int(period), int(tid), name.strip(), symbol))
    return rows


def per_op(rows, ops):
    """{thread label: {symbol: ns per op}} for `ops` ops in the sampled window.

    The Python thread with the most samples is LAUNCHING; every other thread is labelled by its name, and
    threads of one name (an OpenMP team, several streams' workers) are added together."""
    if ops <= 0:
        raise ValueError(f"no op ran in the sampled window (ops={ops})")
    by_thread = collections.Counter()
    for period, tid, name, _ in rows:
        by_thread[(tid, name)] += period
    python_threads = [thread for thread in by_thread if thread[1] == "python"]
    launching = max(python_threads, key=lambda thread: by_thread[thread]) if python_threads else None
    table = collections.defaultdict(collections.Counter)
    for period, tid, name, symbol in rows:
        label = LAUNCHING if (tid, name) == launching else name
        table[label][symbol] += period / ops
    return table


def loop_result(line):
    """(ops, seconds) from the loop's last line, "OPS SECONDS"; a clear error when the loop did not finish."""
    fields = line.split()
    if len(fields) != 2:
        sys.exit(f"op_profile.py: expected the loop's process to end with a line 'OPS SECONDS', got {line!r}: "
                 "it failed or was killed while perf sampled it (its error is above)")
    return float(fields[0]), float(fields[1])


def run_perf(arguments):
    """perf with `arguments`; a clear error when perf is missing."""
    try:
        return subprocess.run(["perf", *arguments], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        sys.exit("op_profile.py: perf was not found; install it (apt-get install linux-perf) and run again")


def record(op, device, driver, package, seconds, frequency):
    """The perf report of `seconds` of the op's warm loop, the ops in that window, and the loop's time per op."""
    env = dict(os.environ, OPENREG_DRIVER=driver)
    if package:
        env["PYTHONPATH"] = os.path.abspath(package)
    if device == "cpu":
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    with tempfile.TemporaryDirectory() as scratch:
        data = os.path.join(scratch, "perf.data")
        # The loop outlasts the sampled window by the time perf takes to attach.
        worker = subprocess.Popen([sys.executable, "-c", WORKER.format(expression=OPS[op]), device,
                                   str(seconds + 1.5)],
                                  env=env, stdout=subprocess.PIPE, text=True)
        try:
            if worker.stdout.readline().strip() != "ready":
                sys.exit("op_profile.py: the loop's process ended before its warm-up did")
            perf = run_perf(["record", "-q", "-e", "cpu-clock", "-F", str(frequency), "-p", str(worker.pid),
                             "-o", data, "--", "sleep", str(seconds)])
            ops, elapsed = loop_result(worker.stdout.readline())
        finally:
            worker.kill()
            worker.wait()
        if perf.returncode != 0 or not os.path.exists(data):
            sys.exit(f"op_profile.py: perf record failed; it needs leave to attach to this user's processes "
                     f"(kernel.perf_event_paranoid <= 2):\n{perf.stderr[-2000:]}")
        report = run_perf(["report", "-i", data, "--sort", "pid,sym", "-F", "period,pid,sym", "--stdio"])
        if report.returncode != 0:
            sys.exit(f"op_profile.py: perf report failed:\n{report.stderr[-2000:]}")
        report = report.stdout
    # The loop runs at one rate throughout, so the window held its share of the loop's ops.
    return report, ops / elapsed * seconds, elapsed / ops


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--op", choices=sorted(OPS), default="add")
    parser.add_argument("--device", choices=["openreg", "cpu"], default="openreg")
    parser.add_argument("--driver", default="threaded_sim")
    parser.add_argument("--package", metavar="DIR", help="a folder holding the torch_openreg build to profile")
    parser.add_argument("--seconds", type=float, default=6.0, help="how long perf samples the warm loop")
    parser.add_argument("--frequency", type=int, default=4000, help="samples per second and thread")
    parser.add_argument("--top", type=int, default=15, help="symbols shown per thread")
    args = parser.parse_args()
    if args.seconds <= 0 or args.frequency <= 0 or args.top < 0:
        parser.error(f"--seconds and --frequency must be positive and --top not negative, got "
                     f"{args.seconds}, {args.frequency} and {args.top}")
    report, ops, seconds_per_op = record(args.op, args.device, args.driver, args.package, args.seconds,
                                         args.frequency)
    table = per_op(parse_report(report), ops)
    where = args.device if args.device == "cpu" else f"openreg ({args.driver})"
    print(f"{args.op} on {where}: {seconds_per_op * 1e6:.3f} µs per op over the whole loop")
    for label, symbols in sorted(table.items(), key=lambda item: -sum(item[1].values())):
        print(f"{label}: {sum(symbols.values()):.0f} ns per op")
        for symbol, ns in symbols.most_common(args.top):
            print(f"  {ns:8.1f}  {symbol}")


if __name__ == "__main__":
    main()
