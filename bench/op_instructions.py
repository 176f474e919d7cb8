"""Instructions per tiny op, counted by callgrind: a measure of the per-op path that the machine's load does not move.

    python bench/op_instructions.py [--op add] [--device openreg] [--package DIR] [--driver cpu_sim]
        [--atomics | --by-function]

Runs the op N1 and N2 times in two fresh processes under `valgrind --tool=callgrind` and prints
(I(N2) - I(N1)) / (N2 - N1): start-up costs cancel out, what is left is one op and the Python around it. Time
ratios on this shared 2-core machine swing by more than a per-op change is worth (bench/README.md); repeated
counts of one build agree within about 150 instructions per op with the default counts, and closer with
`--counts 2000 42000`. `--device cpu` counts CPU eager in a process that never loads
openreg, for the same op. `--package DIR` puts a built `torch_openreg` first on the path (as compare_builds.py
does), to count two builds. Needs valgrind (`apt-get install valgrind`); takes about a minute per count.

`--atomics` also counts the atomic instructions per op (callgrind_atomics.py), by object; `--by-function`
counts them by function instead: each costs several plain instructions' time, so a path can match another's
instruction count and still be slower. Both runs use one OpenMP thread, so CPU eager's process is
single-threaded and glibc leaves the lock prefix off its mutexes (the GIL's) and malloc; openreg's process
has autograd threads and pays them: 16 of CPU eager's atomics per 4x4 matmul are missing here that the
benchmark's processes, with OpenMP threads, pay (docs/performance.md).
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

from callgrind_atomics import count_atomics

OPS = {
    "add": "a + a",
    "mm": "b @ b",
    "mul_": "a.mul_(1.0)",
    "view": "b.view(16)",
    "empty": "torch.empty(256, device=device)",
    # x ** 2, as a squared error runs it.
    "pow": "a ** 2",
    # An activation and an activation's gradient (off the fallback since activation_ops.cc).
    "sigmoid": "a.sigmoid()",
    "silu_backward": "torch.ops.aten.silu_backward(a, a)",
    # A function of one tensor (off the fallback since unary_math_ops.cc).
    "neg": "a.neg()",
    # A convolution goes through the boxed CPU fallback, with its own memory format question.
    "conv2d": "torch.nn.functional.conv2d(image, kernel, padding=1)",
    # A structured op over a tensor list (off the fallback since cat_ops.cc).
    "cat": "torch.cat(pieces)",
    # A structured op reading an index tensor (off the fallback since gather_ops.cc).
    "gather": "torch.gather(b, 1, index)",
}

# The tensors OPS' expressions read, on `device`; bench/op_profile.py's worker makes them too.
OPERANDS = """
a = torch.ones(16, device=device)
b = torch.ones(4, 4, device=device)
image, kernel = torch.ones(1, 1, 4, 4, device=device), torch.ones(1, 1, 3, 3, device=device)
pieces = [torch.ones(8, 32, device=device) for _ in range(4)]
index = torch.zeros(4, 2, dtype=torch.int64, device=device)
"""

WORKER = """
import sys, torch
device, n = sys.argv[1], int(sys.argv[2])
""" + OPERANDS + """
op = lambda: {expression}
for _ in range(200):
    op()
sync = torch.openreg.synchronize if device == "openreg" else (lambda: None)
sync()
for _ in range(n):
    op()
sync()
"""


def profile(op, device, count, package, driver, atomics_by=None):
    """Instructions of a whole run, and with `atomics_by` ("object" or "function") its atomics by that."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENREG_DRIVER=driver,
               # valgrind cannot reserve the address space of the default device memory.
               OPENREG_DEVICE_MEMORY="256MiB")
    if package:
        env["PYTHONPATH"] = os.path.abspath(package)
    if device == "cpu":
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "callgrind.out") if atomics_by else "/dev/null"
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        if atomics_by:
            command.append("--dump-instr=yes")
        command += [sys.executable, "-c", WORKER.format(expression=OPS[op]), device, str(count)]
        result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        found = re.search(r"Collected : (\d+)", result.stderr)
        if result.returncode != 0 or found is None:
            sys.exit(f"op_instructions.py: the counted run failed:\n{result.stderr[-2000:]}")
        atomics = count_atomics(out, by_function=atomics_by == "function") if atomics_by else collections.Counter()
    return int(found.group(1)), atomics


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--op", choices=sorted(OPS), default="add")
    parser.add_argument("--device", choices=["openreg", "cpu"], default="openreg")
    parser.add_argument("--package", metavar="DIR", help="a folder holding the torch_openreg build to count")
    parser.add_argument("--driver", default="cpu_sim")
    parser.add_argument("--counts", type=int, nargs=2, default=[2000, 12000], metavar=("N1", "N2"))
    parser.add_argument("--atomics", action="store_true", help="also count atomic instructions per op, by object")
    parser.add_argument("--by-function", action="store_true",
                        help="also count atomic instructions per op, by function (implies --atomics)")
    args = parser.parse_args()
    low, high = args.counts
    if not 0 <= low < high:
        parser.error(f"--counts needs 0 <= N1 < N2, got {low} {high}")
    atomics_by = "function" if args.by_function else "object" if args.atomics else None
    runs = [profile(args.op, args.device, count, args.package, args.driver, atomics_by) for count in (low, high)]
    per_op = (runs[1][0] - runs[0][0]) / (high - low)
    print(f"{args.op} on {args.device}: {per_op:.0f} instructions per op")
    if atomics_by:
        atomics = {key: (runs[1][1][key] - runs[0][1][key]) / (high - low) for key in runs[0][1] | runs[1][1]}
        print(f"{sum(atomics.values()):.1f} atomic instructions per op")
        for key, per in sorted(atomics.items(), key=lambda item: -item[1]):
            if abs(per) >= 0.05:
                print(f"  {per:6.2f}  {'  '.join(part for part in key if part)}")


if __name__ == "__main__":
    main()
