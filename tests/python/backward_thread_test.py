"""Which thread runs the backward pass of openreg work.

Note [Backward on the calling thread for drivers that run work inline]: on a
driver that runs each launch inline (cpu_sim) the backward pass runs on the
thread that calls backward(), as on the CPU; on one that runs work on threads
of its own (threaded_sim) it runs on PyTorch's autograd device thread, as with
CUDA. An explicit torch.autograd.set_multithreading_enabled(True) keeps the
device thread on either.
"""

import collections
import json
import os
import threading

import torch

from openreg_testing import run_python

DRIVER = os.environ["OPENREG_DRIVER"]
RUNS_WORK_INLINE = DRIVER == "cpu_sim"


def thread_of_backward_node():
    """The thread that ran the backward node of an openreg multiplication."""
    x = torch.ones(4, device="openreg", requires_grad=True)
    y = x * 2
    threads = []
    y.register_hook(lambda grad: threads.append(threading.get_ident()))
    y.sum().backward()
    assert torch.equal(x.grad.cpu(), torch.full((4,), 2.0))
    return threads[0]


def test_backward_runs_on_the_calling_thread_only_where_the_driver_runs_work_inline():
    torch.ones(1, device="openreg").add_(1)  # the thread's first launch decides
    on_caller = thread_of_backward_node() == threading.get_ident()
    assert on_caller == RUNS_WORK_INLINE
    assert torch.autograd.is_multithreading_enabled() == (not RUNS_WORK_INLINE)


def test_an_explicit_choice_of_the_device_thread_wins():
    torch.ones(1, device="openreg").add_(1)
    with torch.autograd.set_multithreading_enabled(True):
        assert thread_of_backward_node() != threading.get_ident()
    assert torch.autograd.is_multithreading_enabled() == (not RUNS_WORK_INLINE)


def test_every_thread_that_launches_decides_for_itself():
    result = {}

    def train():
        torch.ones(1, device="openreg").add_(1)
        result["on_caller"] = thread_of_backward_node() == threading.get_ident()

    worker = threading.Thread(target=train)
    worker.start()
    worker.join()
    assert result["on_caller"] == RUNS_WORK_INLINE


TRAIN = """
import collections, json, os, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4)).to("openreg")
x, y = torch.randn(512, 32, device="openreg"), torch.randn(512, 4, device="openreg")
optimizer = torch.optim.Adam(model.parameters())
for _ in range(20):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
loss.item()
print(json.dumps(collections.Counter(
    open(f"/proc/self/task/{tid}/comm").read().strip() for tid in os.listdir("/proc/self/task"))))
"""


def test_no_openmp_pool_starts_on_an_autograd_device_thread():
    # OpenMP workers take the name of the thread that started them, so a pool
    # on PyTorch's autograd thread shows as a second "pt_autograd_0". Taken
    # right after training, before any idle release could have run: the pool
    # must never have started (on cpu_sim the backward ran on the caller, on
    # threaded_sim the kernels ran on the stream's worker).
    result = run_python(TRAIN)
    assert result.returncode == 0, result.stderr
    names = json.loads(result.stdout.splitlines()[-1])
    assert {name: count for name, count in names.items() if name.startswith("pt_autograd_") and count > 1} == {}, names


FIRST_LAUNCH = """
import json, os, time, torch
torch.ones(1, device="openreg").add_(1)

def autograd_threads():
    names = [open(f"/proc/self/task/{tid}/comm").read().strip() for tid in os.listdir("/proc/self/task")]
    return sorted(name for name in names if name.startswith("pt_autograd_"))

# The engine starts every device's thread at once, and each names itself as
# it starts, which may be after the start returns: once one has a name, give
# the others a moment to take theirs.
found, deadline = autograd_threads(), time.monotonic() + 5
while found and len(found) < torch.openreg.device_count() and time.monotonic() < deadline:
    time.sleep(0.01)
    found = autograd_threads()
print(json.dumps({"device_count": torch.openreg.device_count(), "autograd_threads": found}))
"""


def test_autograd_device_threads_start_at_the_first_inline_launch():
    # Started there, not in the middle of the first backward pass, where their
    # start slowed that pass's OpenMP kernels (Note [Backward on the calling
    # thread for drivers that run work inline]). A fresh process: this one's
    # engine has long started them.
    result = run_python(FIRST_LAUNCH)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[-1])
    expected = [f"pt_autograd_{i}" for i in range(found["device_count"])] if RUNS_WORK_INLINE else []
    assert found["autograd_threads"] == expected, found
