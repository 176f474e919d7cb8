"""Lazy initialization, fork safety and multiprocessing with 'spawn'."""

import os
import subprocess
import sys

from openreg_testing import run_python


def test_import_torch_touches_no_driver_state():
    result = run_python(
        """
        import torch
        print(torch.openreg.is_initialized(), torch.openreg._is_in_bad_fork())
        x = torch.ones(2)  # CPU work does not start the device either
        print(torch.openreg.is_initialized())
        torch.openreg.Stream  # nor does touching the module
        torch.ones(1, device="openreg")
        print(torch.openreg.is_initialized())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False", "False", "True"]


def test_bad_configuration_is_reported_at_first_use_not_at_import():
    result = run_python(
        """
        import torch
        print("imported")
        try:
            torch.ones(1, device="openreg")
        except ValueError as error:
            print("error:", "OPENREG_DEVICE_COUNT" in str(error))
        """,
        env={"OPENREG_DEVICE_COUNT": "zero"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["imported", "error:", "True"]


FORK_PROGRAM = """
import os, sys, torch
{before_fork}
read_end, write_end = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(read_end)
    lines = [str(torch.openreg._is_in_bad_fork()), str(torch.openreg.is_initialized())]
    for use in ("torch.ones(1, device='openreg')", "torch.openreg.synchronize()",
                "torch.openreg.current_stream()", "torch.openreg.manual_seed(1)"):
        try:
            eval(use)
            lines.append(use + ": ok")
        except RuntimeError as error:
            lines.append(use + ": " + ("spawn" if "'spawn'" in str(error) else str(error)))
    lines.append(str(float(torch.ones(2).sum())))  # CPU still works in the child
    os.write(write_end, "\\n".join(lines).encode())
    os._exit(0)
os.close(write_end)
_, status = os.waitpid(pid, 0)
print(os.read(read_end, 65536).decode())
print("parent:", float(torch.ones(2, device="openreg").sum()), "status", status)
"""


def test_using_the_device_in_a_child_forked_after_init_says_to_use_spawn():
    result = run_python(FORK_PROGRAM.format(before_fork="torch.ones(1, device='openreg').sum().item()"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().split("\n")
    assert lines[:2] == ["True", "False"]
    assert lines[2:6] == [
        "torch.ones(1, device='openreg'): spawn",
        "torch.openreg.synchronize(): spawn",
        "torch.openreg.current_stream(): spawn",
        "torch.openreg.manual_seed(1): spawn",
    ]
    assert lines[6] == "2.0"
    assert lines[7] == "parent: 2.0 status 0"


AUTOGRAD_FORK_PROGRAM = """
import os, torch
torch.ones(1, device="openreg").add_(1)  # a launch, no backward pass
torch.openreg.synchronize()  # no driver thread is in the middle of a kernel at the fork
pid = os.fork()
if pid == 0:
    w = torch.ones(2, requires_grad=True)
    try:
        (w * 2).sum().backward()
        print("child backward: ok", flush=True)
    except RuntimeError as error:
        print("child backward:", "fork" if "fork-based multiprocessing" in str(error) else str(error), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
w = torch.ones(2, device="openreg", requires_grad=True)
(w * 2).sum().backward()
print("parent backward:", w.grad.cpu().tolist())
"""


def test_a_child_forked_after_a_launch_on_a_synchronous_driver_gets_autograds_fork_error():
    # Autograd's device threads start at the first inline launch (Note
    # [Backward on the calling thread for drivers that run work inline]), and
    # PyTorch refuses a backward pass in a child forked after they started,
    # with its own message, as after any backward pass on CUDA. Before that
    # change, only a parent's backward pass did this.
    result = run_python(AUTOGRAD_FORK_PROGRAM)
    assert result.returncode == 0, result.stderr
    expected_child = "fork" if os.environ["OPENREG_DRIVER"] == "cpu_sim" else "ok"
    assert result.stdout.strip().split("\n") == [f"child backward: {expected_child}",
                                                   "parent backward: [2.0, 2.0]"], result.stdout


def test_a_child_forked_before_init_may_use_the_device():
    result = run_python(FORK_PROGRAM.format(before_fork=""))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().split("\n")
    assert lines[:2] == ["False", "False"]
    assert all(line.endswith(": ok") for line in lines[2:6]), lines


SPAWN_PROGRAM = """
import torch
import torch.multiprocessing as mp


def work(rank, queue):
    device = f"openreg:{rank}"
    x = torch.arange(4.0, device=device) * (rank + 1)
    queue.put((rank, str(x.device), x.sum().item()))


if __name__ == "__main__":
    torch.ones(1, device="openreg").sum().item()  # the parent initialized first
    context = mp.get_context("spawn")
    queue = context.SimpleQueue()
    mp.start_processes(work, args=(queue,), nprocs=2, start_method="spawn")
    print(sorted(queue.get() for _ in range(2)))
"""


def test_multiprocessing_with_spawn_works(tmp_path):
    # 'spawn' re-imports the main module, so the program must be a file.
    script = tmp_path / "spawn_program.py"
    script.write_text(SPAWN_PROGRAM)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[(0, 'openreg:0', 6.0), (1, 'openreg:1', 12.0)]"
