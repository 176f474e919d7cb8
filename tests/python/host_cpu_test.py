"""Using openreg leaves the process's own CPU work as fast as it was.

ATen's CPU kernels use OpenMP, and every thread that runs a parallel region
keeps a pool of OpenMP workers. Too many pooled threads make every OpenMP
barrier in the process sleep instead of spin, which slowed a small CPU training
step 1.5-3x for good once openreg had trained a model (Note [OpenMP worker
pools on device threads]). The threads that run device work must give their
pools back once the device is idle: PyTorch's autograd device threads (on
cpu_sim, which runs work inline, when a backward pass is made to run there
with torch.autograd.set_multithreading_enabled(True); by default it runs on
the calling thread, Note [Backward on the calling thread for drivers that run
work inline]) and threaded_sim's stream workers. OpenMP workers inherit the
name of the thread that started them, so the test counts threads by name.
"""

import json
import os

import pytest

from openreg_testing import run_python

DRIVER = os.environ["OPENREG_DRIVER"]

TRAIN_THEN_IDLE = """
import collections, json, os, time, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
x, y = torch.randn(512, 32), torch.randn(512, 4)
def step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    with torch.autograd.set_multithreading_enabled(True):  # the device thread, on every driver
        loss.backward()
    optimizer.step()
    return loss
optimizer = torch.optim.Adam(model.parameters())
for _ in range(5):
    step(model, optimizer, x, y)  # the CPU's own OpenMP pool, as in any process
model.to("openreg")
x, y = x.to("openreg"), y.to("openreg")
optimizer = torch.optim.Adam(model.parameters())
for _ in range(20):
    loss = step(model, optimizer, x, y)
# Long kernels: threaded_sim runs them on every thread, so its worker starts a
# pool (the small model's short ones may run on one, Note [OpenMP width of
# driver threads]).
big = torch.randn(4_000_000, device="openreg")
for _ in range(3):
    big.exp_()
loss.item()
def names():
    return collections.Counter(
        open(f"/proc/self/task/{tid}/comm").read().strip() for tid in os.listdir("/proc/self/task"))
busy = names()
time.sleep(1.0)  # well past the 50 ms the device threads wait, idle
print(json.dumps({"busy": busy, "idle": names()}))
"""


def thread_names(driver_options=None):
    env = {"OPENREG_DRIVER_OPTIONS": driver_options} if driver_options else {}
    result = run_python(TRAIN_THEN_IDLE, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def pooled_threads(names):
    """Threads beyond one per device thread: OpenMP workers they started."""
    return {name: count - 1 for name, count in names.items() if name.startswith(("pt_autograd_", "openreg_stream")) and count > 1}


def test_device_threads_give_back_their_openmp_workers_when_idle():
    names = thread_names()
    assert pooled_threads(names["idle"]) == {}, names


@pytest.mark.skipif(DRIVER != "threaded_sim", reason="only threaded_sim can turn the release off (idle_release_ms=0)")
def test_the_thread_count_detects_pools_kept_by_a_device_thread():
    # The control: with the release turned off, the same count finds the pool
    # of the stream's worker.
    names = thread_names("idle_release_ms=0")
    assert pooled_threads(names["idle"]) == {"openreg_stream": 1}, names
