"""Current device and current stream are per thread; autograd's device threads work."""

import contextlib
import os
import threading

import pytest
import torch


def run_in_threads(target, count):
    errors = []

    def guarded(index):
        try:
            target(index)
        except BaseException as error:  # reported in the main thread
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def test_each_thread_has_its_own_current_device_and_stream():
    barrier = threading.Barrier(2)
    seen = {}

    def work(index):
        torch.openreg.set_device(index)
        stream = torch.openreg.Stream()
        torch.openreg.set_stream(stream)
        barrier.wait()  # both threads have set their state before either reads it
        for step in range(20):
            x = torch.full((256,), float(index + step), device="openreg")
            assert x.device == torch.device(f"openreg:{index}")
            assert torch.openreg.current_device() == index
            assert torch.openreg.current_stream() == stream
            assert x.sum().item() == 256 * (index + step)
        seen[index] = (torch.openreg.current_device(), torch.openreg.current_stream())

    run_in_threads(work, 2)
    assert seen[0][0] == 0 and seen[1][0] == 1
    assert seen[0][1] != seen[1][1]
    # The main thread's state is untouched.
    assert torch.openreg.current_device() == 0
    assert torch.openreg.current_stream(0) == torch.openreg.default_stream(0)
    assert torch.openreg.current_stream(1) == torch.openreg.default_stream(1)


def test_a_new_thread_starts_on_device_zero_with_default_streams():
    torch.openreg.set_device(1)
    torch.openreg.set_stream(torch.openreg.Stream("openreg:1"))
    try:
        seen = []
        run_in_threads(lambda _: seen.append((torch.openreg.current_device(), torch.openreg.current_stream(1).stream_id)), 1)
        assert seen == [(0, 0)]
    finally:
        torch.openreg.set_stream(torch.openreg.default_stream(1))
        torch.openreg.set_device(0)


def test_autograd_runs_backward_on_device_threads_for_each_device():
    # The autograd engine gives every openreg device a worker thread; a graph
    # that spans both devices runs backward on both threads.
    torch.manual_seed(0)
    w0 = torch.randn(8, 8, device="openreg:0", requires_grad=True)
    w1 = torch.randn(8, 8, device="openreg:1", requires_grad=True)
    x = torch.randn(4, 8)
    hidden = (x.to("openreg:0") @ w0).relu()
    out = (hidden.to("openreg:1") @ w1).sum()
    out.backward()
    w0_cpu = w0.detach().cpu().requires_grad_()
    w1_cpu = w1.detach().cpu().requires_grad_()
    ((x @ w0_cpu).relu() @ w1_cpu).sum().backward()
    assert w0.grad.device == torch.device("openreg:0")
    assert w1.grad.device == torch.device("openreg:1")
    torch.testing.assert_close(w0.grad.cpu(), w0_cpu.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(w1.grad.cpu(), w1_cpu.grad, rtol=1e-4, atol=1e-4)


def test_backward_from_several_threads_at_once():
    def work(index):
        device = f"openreg:{index % 2}"
        w = torch.full((16,), 2.0, device=device, requires_grad=True)
        for _ in range(10):
            (w * w).sum().backward()
        assert w.grad.device == torch.device(device)
        assert torch.equal(w.grad.cpu(), torch.full((16,), 40.0))

    run_in_threads(work, 4)


@pytest.mark.parametrize("device_thread", [False, True], ids=["default", "device_thread"])
def test_backward_sees_the_forward_stream(device_thread):
    # Backward ops run on the stream the forward op used, as on CUDA, on
    # whichever thread runs them: autograd's device thread, or on cpu_sim by
    # default the calling thread (Note [Backward on the calling thread for
    # drivers that run work inline]).
    stream = torch.openreg.Stream("openreg:1")
    seen = []

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            seen.append((threading.current_thread() is threading.main_thread(), torch.openreg.current_stream(1)))
            return grad

    with torch.openreg.stream(stream):
        x = torch.ones(4, device="openreg:1", requires_grad=True)
        with torch.autograd.set_multithreading_enabled(True) if device_thread else contextlib.nullcontext():
            Probe.apply(x).sum().backward()
    on_main_thread = os.environ["OPENREG_DRIVER"] == "cpu_sim" and not device_thread
    assert seen == [(on_main_thread, stream)]
