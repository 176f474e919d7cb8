"""The OpenMP width of the threads a driver runs work on (Note [OpenMP width of driver threads]).

threaded_sim runs kernels on a worker thread per stream. Short kernels there
run on one thread fewer than ATen's count, leaving a core to the host, even
while the host waits for them; long kernels use every thread; a host thread
gives its idle OpenMP pool back before it waits for the device. OpenMP workers
inherit the name of the thread that started them, so each test counts threads
by name, in a process of its own with two intra-op threads (a narrow team is
then a single thread, with no pool at all) and the idle release turned off
(idle_release_ms=0), so pools stay until counted.
"""

import json
import os

import pytest

from openreg_testing import run_python

pytestmark = pytest.mark.skipif(
    os.environ["OPENREG_DRIVER"] != "threaded_sim", reason="only threaded_sim runs work on threads of its own"
)

PRELUDE = """
import collections, json, os, torch
torch.set_num_threads(2)
def names():
    return collections.Counter(
        open(f"/proc/self/task/{tid}/comm").read().strip() for tid in os.listdir("/proc/self/task"))
def pooled(name):
    return names()[name] - 1
torch.ones(1, device="openreg").add_(1)  # starts the stream's worker
torch.openreg.synchronize()
main_thread = open("/proc/thread-self/comm").read().strip()
"""


def run(body):
    result = run_python(PRELUDE + body, env={"OPENREG_DRIVER_OPTIONS": "idle_release_ms=0"})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_short_parallel_kernels_leave_a_core_to_the_host():
    # 300k elements: parallel in ATen (above its grain size), 10-100 us each;
    # enough of them to fill several of the windows the width is decided over
    # after randn's long kernel.
    counts = run("""
x = torch.randn(300_000, device="openreg")
for _ in range(2000):
    x.add_(1)
torch.openreg.synchronize()
print(json.dumps({"pooled": pooled("openreg_stream"), "threads": torch.get_num_threads()}))
""")
    assert counts == {"pooled": 0, "threads": 2}, counts


def test_long_kernels_use_every_thread():
    counts = run("""
x = torch.randn(8_000_000, device="openreg")
for _ in range(10):
    x.exp_().log_()
torch.openreg.synchronize()
print(json.dumps({"pooled": pooled("openreg_stream")}))
""")
    assert counts == {"pooled": 1}, counts


def test_one_window_of_long_work_does_not_widen():
    # A thread's first kernels pay one-time set-up that looks like long work;
    # a single long window must not start a pool for the short work after it.
    counts = run("""
big = torch.randn(8_000_000, device="openreg")  # one long kernel: a window of its own
x = torch.ones(300_000, device="openreg")
for _ in range(10):  # well under a window of short work
    x.add_(1)
torch.openreg.synchronize()
print(json.dumps({"pooled": pooled("openreg_stream")}))
""")
    assert counts == {"pooled": 0}, counts


def test_short_kernels_the_host_waits_for_stay_narrow():
    # A second stream's long work holds the first stream's short kernels back
    # until the host is already waiting for them. Widening then would start a
    # pool just as the host leaves its core (Note [OpenMP width of driver
    # threads]).
    counts = run("""
x, big = torch.randn(300_000, device="openreg"), torch.randn(8_000_000, device="openreg")
side = torch.openreg.Stream()
with torch.openreg.stream(side):
    for _ in range(10):
        big.exp_().log_()
    ready = torch.openreg.Event()
    ready.record()
torch.openreg.synchronize()
before = names()["openreg_stream"]  # two workers, and the side one's pool
with torch.openreg.stream(side):
    for _ in range(10):
        big.exp_().log_()
    ready.record()
torch.openreg.current_stream().wait_event(ready)
for _ in range(200):
    x.add_(1)
torch.openreg.synchronize()
print(json.dumps({"before": before, "after": names()["openreg_stream"]}))
""")
    assert counts == {"before": 3, "after": 3}, counts


def test_deterministic_algorithms_keep_every_team_full_width():
    # The same short kernels as above, now with a pool: the team size decides
    # the last bits of some kernels, so determinism takes every thread.
    counts = run("""
torch.use_deterministic_algorithms(True)
x = torch.randn(300_000, device="openreg")
for _ in range(200):
    x.add_(1)
torch.openreg.synchronize()
print(json.dumps({"pooled": pooled("openreg_stream")}))
""")
    assert counts == {"pooled": 1}, counts


def test_a_host_thread_gives_back_its_idle_pool_before_it_waits():
    # Other threads the main thread started may carry its name too: count the
    # change.
    counts = run("""
without_pool = names()[main_thread]
torch.randn(4_000_000).exp_()  # CPU work: the main thread's own pool
with_pool = names()[main_thread]
torch.ones(300_000, device="openreg").add_(1)
torch.openreg.synchronize()
print(json.dumps({"pool": with_pool - without_pool, "after_waiting": names()[main_thread] - without_pool}))
""")
    assert counts == {"pool": 1, "after_waiting": 0}, counts


# A graph replay runs its recorded kernels as one piece of work; they are
# judged one by one (Note [OpenMP width of driver threads]). 300k-element adds
# are short parallel kernels: a replay of 200 is ~6 ms, long as a whole.
CAPTURE_SHORT_KERNELS = """
x = torch.randn(300_000, device="openreg")
graph = torch.openreg.Graph()
x.add_(1)
torch.openreg.synchronize()
with torch.openreg.graph(graph):
    for _ in range(200):
        x.add_(1)
torch.openreg.synchronize()
"""


def test_replayed_short_kernels_leave_a_core_to_a_busy_host():
    # The host polls instead of waiting: it stays busy, as it is with the next
    # step's Python under torch.compile's reduce-overhead mode.
    counts = run(CAPTURE_SHORT_KERNELS + """
stream = torch.openreg.current_stream()
for _ in range(10):
    graph.replay()
while not stream.query():
    pass
print(json.dumps({"pooled": pooled("openreg_stream")}))
""")
    assert counts == {"pooled": 0}, counts


def test_replayed_short_kernels_use_every_thread_while_the_host_waits():
    counts = run(CAPTURE_SHORT_KERNELS + """
for _ in range(10):
    graph.replay()
torch.openreg.synchronize()
print(json.dumps({"pooled": pooled("openreg_stream")}))
""")
    assert counts == {"pooled": 1}, counts
