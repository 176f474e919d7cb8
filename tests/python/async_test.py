"""Asynchronous execution (Note [Asynchronous execution] in core/torch_runtime/stream_work.h).

What must hold on every driver, and what only a truly asynchronous driver
(threaded_sim) shows. Timing assertions are orders of events or loose ratios
measured in the same test with a wide margin, never absolute times.
"""

import gc
import os
import time

import pytest
import torch

from openreg_testing import assert_same, run_python

DRIVER = os.environ["OPENREG_DRIVER"]
needs_async_driver = pytest.mark.skipif(
    DRIVER == "cpu_sim", reason="cpu_sim runs every op to completion before returning"
)


@needs_async_driver
def test_enqueueing_is_much_faster_than_executing():
    a = torch.randn(1024, 1024, device="openreg")
    # The first call of an op pays one-time costs (PyTorch imports its Python
    # meta registrations on first use); the steady state is what matters.
    a @ a
    torch.openreg.synchronize()
    start = time.perf_counter()
    results = [a @ a for _ in range(8)]
    enqueued = time.perf_counter() - start
    torch.openreg.synchronize()
    executed = time.perf_counter() - start
    assert enqueued < 0.25 * executed, (enqueued, executed)
    assert_same(results[-1], a.cpu() @ a.cpu(), rtol=1e-4, atol=1e-3)


@needs_async_driver
def test_work_on_two_streams_runs_at_the_same_time():
    # Each stream brackets a long run of matmuls with timing events. The two
    # intervals overlap when the streams run concurrently: an order of
    # timestamps, not a speed, so it holds on a loaded machine too (how much
    # faster two streams are is bench/'s business, not a test's).
    a = torch.randn(512, 512, device="openreg")
    streams = [torch.Stream(device="openreg") for _ in range(2)]
    intervals = []
    for stream in streams:
        start = torch.Event(device="openreg", enable_timing=True)
        end = torch.Event(device="openreg", enable_timing=True)
        with stream:
            start.record()
            for _ in range(20):
                result = a @ a
            end.record()
        intervals.append((start, end, result))
    torch.openreg.synchronize()
    (start_1, end_1, result_1), (start_2, end_2, result_2) = intervals
    assert start_1.elapsed_time(end_2) > 0, "the second stream ended before the first began"
    assert start_2.elapsed_time(end_1) > 0, "the first stream ended before the second began: they ran one after the other"
    expected = a.cpu() @ a.cpu()
    assert_same(result_1, expected, rtol=1e-4, atol=1e-3)
    assert_same(result_2, expected, rtol=1e-4, atol=1e-3)


def test_work_on_a_stream_sees_earlier_work_on_it():
    stream = torch.Stream(device="openreg")
    x = torch.zeros(1000, device="openreg")  # filled on the default stream
    stream.wait_stream(torch.accelerator.current_stream())
    with stream:
        for _ in range(20):
            x.add_(1)
        # Read on the same stream: outside it, reading `total` would race
        # with `stream` unless the reader waited for it (as on CUDA).
        assert x.sum().item() == 20000


def test_tensor_dropped_right_after_enqueue_is_not_reused_early():
    # Each temporary is freed by Python while the work that reads it may still
    # be queued; its memory must not be handed out before that work ran.
    results = []
    for i in range(50):
        results.append((torch.full((10_000,), float(i), device="openreg") * 2).sum())
    assert [r.item() for r in results] == [20_000.0 * i for i in range(50)]


def test_work_that_ran_lets_go_of_the_memory_it_held():
    # Work holds the storages its stream does not order (here one allocated on
    # another stream) until it has run and its record is destroyed. On cpu_sim
    # the work runs inside the launch, whose thread then destroys the record
    # before the op returns (Note [Asynchronous execution]); on threaded_sim,
    # the synchronization that finds the work done destroys it.
    side = torch.Stream(device="openreg")
    torch.openreg.synchronize()
    start = torch.openreg.memory_allocated()
    with side:
        x = torch.ones(64, 64, device="openreg")
    side.synchronize()
    y = x @ x  # a structured op, on the default stream
    del x, y
    if DRIVER != "cpu_sim":
        torch.openreg.synchronize()
    assert torch.openreg.memory_allocated() == start


@needs_async_driver
def test_queued_ops_keep_no_python_object_of_a_dropped_tensor_alive():
    # PyTorch keeps a tensor's Python object alive for as long as C++ holds
    # its TensorImpl. Queued work that held its operands' tensors therefore
    # kept a Python object for every intermediate Python had dropped, and a
    # loop of tiny ops on a busy stream ran a full garbage collection of the
    # process every ~40,000 ops (Note [Queued loops hold storages, not
    # tensors], core/aten/iterator_loops.h).
    a = torch.arange(16, dtype=torch.float32)
    device_a = a.to("openreg")
    ops = {
        "add": lambda t: t + t,
        "sub with a number": lambda t: t - 1,
        "mul, number first": lambda t: 2 * t,
        "div": lambda t: t / 3,
        "relu of a temporary": lambda t: torch.relu(t - 8),
        "sqrt": lambda t: t.sqrt(),
        "addcmul": lambda t: torch.addcmul(t, t, t, value=0.5),
        "lerp": lambda t: torch.lerp(t, t * 2, 0.25),
        "in-place on a temporary": lambda t: (t * 1).mul_(3),
        "fill_": lambda t: torch.empty(16, device=t.device).fill_(2),
        "dtype conversion": lambda t: t.double(),
        "strided copy": lambda t: t.view(4, 4).t().contiguous(),
        "CPU fallback": lambda t: t.sin(),
    }
    big = torch.randn(1024, 1024, device="openreg")
    stream = torch.openreg.current_stream()

    def python_tensors():
        return sum(1 for obj in gc.get_objects() if isinstance(obj, torch.Tensor))

    for name, op in ops.items():
        expected = op(a)  # CPU eager
        op(device_a)  # first calls may cache Python objects of their own
        gc.collect()
        gc.disable()
        try:
            before = python_tensors()
            for _ in range(4):  # tens of milliseconds that the ops queue behind
                big @ big
            for _ in range(50):
                op(device_a)
            last = op(device_a)
            busy = not stream.query()
            # Work that ran is released on this thread, at its next openreg
            # call: counting without one sees what the queued work held.
            lingering = python_tensors() - before - 1  # `last` is held
        finally:
            gc.enable()
        torch.openreg.synchronize()
        assert busy, f"{name}: the stream ran out of work before the count; the count says nothing"
        assert lingering == 0, f"{name}: {lingering} dropped results kept their Python objects while queued"
        assert_same(last, expected)
        del last  # not to be counted as lingering in the next count


MISSING_SYNC = """
import torch
producer = torch.Stream(device="openreg")
consumer = torch.Stream(device="openreg")
wrong = 0
for trial in range(5):
    x = torch.zeros(100_000, device="openreg")
    torch.openreg.synchronize()
    with producer:
        for _ in range(10):
            x.add_(1)
    with consumer:
        {wait}
        total = x.sum()
    torch.openreg.synchronize()
    wrong += int(total.item() != 1_000_000)
print(wrong)
"""


@needs_async_driver
def test_adversarial_mode_exposes_a_missing_synchronization():
    env = {"OPENREG_DRIVER_OPTIONS": "adversarial=1,adversarial_seed=7"}
    missing = run_python(MISSING_SYNC.format(wait="pass"), env=env)
    synchronized = run_python(MISSING_SYNC.format(wait="consumer.wait_stream(producer)"), env=env)
    assert missing.returncode == 0, missing.stderr
    assert synchronized.returncode == 0, synchronized.stderr
    assert int(missing.stdout) >= 4, "the missing wait_stream went unnoticed"
    assert int(synchronized.stdout) == 0


TRAINING = """
import hashlib, torch
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(16, 32, device="openreg"), torch.nn.ReLU(), torch.nn.Dropout(0.3),
    torch.nn.Linear(32, 4, device="openreg"))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(64, 16, device="openreg")
y = torch.randint(0, 4, (64,), device="openreg")
for _ in range(3):
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
print(hashlib.sha256(b"".join(p.detach().cpu().numpy().tobytes() for p in model.parameters())).hexdigest())
"""


def test_training_with_dropout_is_bitwise_identical_on_every_driver():
    digests = {}
    for driver, options in (("cpu_sim", ""), (DRIVER, ""), (DRIVER, "adversarial=1,adversarial_seed=3")):
        if driver == "cpu_sim" and options:
            continue
        env = {"OPENREG_DRIVER": driver}
        if options:
            env["OPENREG_DRIVER_OPTIONS"] = options
        result = run_python(TRAINING, env=env)
        assert result.returncode == 0, result.stderr
        digests[(driver, options)] = result.stdout.strip()
    assert len(set(digests.values())) == 1, digests


def test_failing_kernel_is_reported_once_at_synchronization_and_the_device_recovers():
    index = torch.tensor([7], device="openreg")
    with pytest.raises(RuntimeError, match=r"failed on openreg:0: index 7 is out of bounds"):
        torch.arange(3, device="openreg")[index]
        torch.openreg.synchronize()
    torch.openreg.synchronize()  # reported once
    assert (torch.ones(4, device="openreg") * 3).sum().item() == 12.0


def test_record_stream_keeps_memory_until_that_stream_has_used_it():
    stream = torch.Stream(device="openreg")
    x = torch.ones(100_000, device="openreg")
    stream.wait_stream(torch.accelerator.current_stream())
    with stream:
        total = x.sum()
    x.record_stream(stream)
    del x  # the memory stays reserved until `stream` is past its use
    for _ in range(5):
        torch.zeros(100_000, device="openreg")
    with stream:
        assert total.item() == 100_000
    with pytest.raises(RuntimeError, match="expected a stream on openreg:0"):
        torch.ones(1, device="openreg:0").record_stream(torch.Stream(device="openreg:1"))
