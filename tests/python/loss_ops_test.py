"""softmax, log_softmax, their backward ops and nll_loss forward and backward on
openreg (core/aten/loss_ops.cc): ATen's C++ meta function at the call and its
CPU implementation on the stream, or the CPU fallback for the calls that path
leaves to it, give the CPU's results, gradients, dtypes and errors."""

import pytest
import torch
import torch.nn.functional as F

from openreg_testing import CountingMeta, assert_same, seeded_tensor

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def tolerances(dtype):
    reduced = dtype in (torch.float16, torch.bfloat16)
    return {"atol": 1e-2, "rtol": 1e-2, "equal_nan": True} if reduced else {"equal_nan": True}


def same_as_cpu(function, *tensors, **keywords):
    """`function` on openreg copies of `tensors` gives the CPU's results (a
    tensor or a tuple of them) or raises its error (at the latest by the next
    synchronization: errors found in the values raise on the stream)."""
    try:
        cpu = function(*tensors, **keywords)
    except (RuntimeError, IndexError) as cpu_error:
        with pytest.raises((RuntimeError, IndexError)) as device_error:
            function(*[t.openreg() for t in tensors], **keywords)
            torch.openreg.synchronize()
        assert str(cpu_error).split("\n")[0] in str(device_error.value)
        return
    device = function(*[t.openreg() for t in tensors], **keywords)
    for device_result, cpu_result in zip(*[r if isinstance(r, tuple) else (r,) for r in (device, cpu)]):
        assert device_result.dtype == cpu_result.dtype
        assert device_result.shape == cpu_result.shape
        assert_same(device_result, cpu_result, **tolerances(cpu_result.dtype))


@pytest.mark.parametrize("dtype", FLOATS + [torch.complex64], ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("function", [F.softmax, F.log_softmax], ids=["softmax", "log_softmax"])
def test_softmax_forward_and_backward(function, dim, dtype):
    x = seeded_tensor(dtype, (4, 5, 3))

    def with_gradient(t):
        t = t.detach().requires_grad_(True)
        y = function(t, dim)
        (y * torch.arange(y.numel(), device=t.device).reshape(y.shape).to(y.dtype)).sum().backward()
        return y, t.grad

    same_as_cpu(lambda t: function(t, dim), x)
    if not dtype.is_complex:
        same_as_cpu(with_gradient, x)


def test_softmax_shapes_views_and_out():
    x = seeded_tensor(torch.float32, (6, 4, 5))
    for view in [lambda t: t.transpose(0, 2), lambda t: t[::2, 1:], lambda t: t[0, 0], lambda t: t[0, 0, 0]]:
        same_as_cpu(lambda t: F.log_softmax(view(t), 0), x)
        same_as_cpu(lambda t: F.softmax(view(t), -1), x)
    same_as_cpu(lambda t: F.log_softmax(t, 1), seeded_tensor(torch.float32, (0, 4)))
    # out= forms, resized as the CPU resizes them.
    for op in (torch.ops.aten._softmax.out, torch.ops.aten._log_softmax.out):
        def with_out(t):
            out = torch.empty(0, device=t.device)
            assert op(t, 1, False, out=out) is out
            return out
        same_as_cpu(with_out, x)
        same_as_cpu(lambda t: op(t, 1, False, out=torch.empty(0, dtype=torch.float64, device=t.device)), x)
    for op in (torch.ops.aten._softmax_backward_data.out, torch.ops.aten._log_softmax_backward_data.out):
        def backward_with_out(grad, output):
            out = torch.empty(2, device=grad.device)
            assert op(grad, output, 1, torch.float32, out=out) is out
            return out
        same_as_cpu(backward_with_out, seeded_tensor(torch.float32, (3, 4), 1), seeded_tensor(torch.float32, (3, 4), 2))


@pytest.mark.parametrize("call, message", [
    (lambda d: F.log_softmax(torch.ones(2, 3, device=d), 2), r"Dimension out of range"),
    (lambda d: F.softmax(torch.ones(2, 3, device=d), -3), r"Dimension out of range"),
    (lambda d: torch.ops.aten._log_softmax_backward_data(torch.ones(2, 3, device=d), torch.ones(2, 3, device=d), 2,
                                                         torch.float32), r"Dimension out of range"),
    (lambda d: torch.ops.aten.nll_loss_forward(torch.ones(2, 3, device=d), torch.zeros(3, dtype=torch.long, device=d),
                                               None, 1, -100), r"size mismatch"),
    (lambda d: torch.ops.aten.nll_loss_forward(torch.ones(2, 3, device=d), torch.zeros(2, dtype=torch.long, device=d),
                                               torch.ones(4, device=d), 1, -100), "weight tensor should be defined"),
    (lambda d: torch.ops.aten.nll_loss_forward(torch.ones(2, 3, 4, device=d),
                                               torch.zeros(2, dtype=torch.long, device=d), None, 1, -100),
     "input tensor should be 1D or 2D"),
    (lambda d: torch.ops.aten.nll_loss_backward(torch.ones(3, device=d), torch.ones(2, 3, device=d),
                                                torch.zeros(2, dtype=torch.long, device=d), None, 1, -100,
                                                torch.ones((), device=d)), "grad_output"),
], ids=["log_softmax-dim", "softmax-dim", "backward-dim", "nll-batch", "nll-weight", "nll-dims", "nll-grad-shape"])
def test_errors_come_at_the_call_and_the_device_stays_usable(call, message):
    with pytest.raises((RuntimeError, IndexError), match=message) as cpu_error:
        call("cpu")
    # The CPU's message, from the C++ meta function on the calling thread,
    # without a synchronization.
    with pytest.raises(type(cpu_error.value), match=message) as device_error:
        call("openreg")
    assert str(device_error.value).split("\n")[0] == str(cpu_error.value).split("\n")[0]
    assert_same(F.log_softmax(torch.zeros(2, 2, device="openreg"), 1), torch.full((2, 2), -0.6931472))


@pytest.mark.parametrize("target", [5, -1, -100], ids=["past-the-classes", "negative", "ignored-elsewhere"])
def test_a_target_out_of_range_raises_the_cpus_error_by_the_next_synchronization(target):
    x = seeded_tensor(torch.float32, (3, 5))
    targets = torch.tensor([0, target, 2])
    # -100 is ignored by default: only a different ignore_index makes it a bad index.
    ignore_index = 7 if target == -100 else -100
    with pytest.raises(IndexError, match="out of bounds") as cpu_error:
        F.nll_loss(x, targets, ignore_index=ignore_index)
    with pytest.raises(RuntimeError) as device_error:
        F.nll_loss(x.openreg(), targets.openreg(), ignore_index=ignore_index)
        torch.openreg.synchronize()
    assert str(cpu_error.value).split("\n")[0] in str(device_error.value)
    assert "aten::nll_loss_forward failed on openreg" in str(device_error.value)
    assert_same(F.nll_loss(x.openreg(), torch.tensor([0, 1, 2]).openreg()), F.nll_loss(x, torch.tensor([0, 1, 2])))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_nll_loss_and_cross_entropy_forward_and_backward(ignore_index, weighted, reduction, dtype):
    x = seeded_tensor(dtype, (6, 4))
    targets = torch.tensor([0, 1, 3, 1, 2, 0])
    weight = seeded_tensor(dtype, (4,), 3).abs() if weighted else None

    def loss_and_gradient(function, t, target, *weights):
        t = t.detach().requires_grad_(True)
        loss = function(t, target, weight=weights[0] if weights else None, reduction=reduction,
                        ignore_index=ignore_index)
        (loss.sum() if reduction == "none" else loss).backward()
        return loss, t.grad

    extra = (weight,) if weighted else ()
    for function in (F.nll_loss, F.cross_entropy):
        same_as_cpu(lambda t, target, *w: loss_and_gradient(function, t, target, *w), x, targets, *extra)


def test_nll_loss_one_sample_empty_batch_and_all_ignored():
    same_as_cpu(lambda t, target: F.nll_loss(t, target), seeded_tensor(torch.float32, (4,)), torch.tensor(2))
    for reduction in ("mean", "sum", "none"):
        same_as_cpu(lambda t, target: F.nll_loss(t, target, reduction=reduction), seeded_tensor(torch.float32, (0, 4)),
                    torch.zeros(0, dtype=torch.long))
        # Every target ignored: the mean divides zero by zero, as on the CPU.
        same_as_cpu(lambda t, target: F.nll_loss(t, target, reduction=reduction, ignore_index=1),
                    seeded_tensor(torch.float32, (3, 4)), torch.ones(3, dtype=torch.long))
    # Spatial inputs (nll_loss2d and its N-d reshape) stay on the fallback.
    same_as_cpu(lambda t, target: F.cross_entropy(t, target), seeded_tensor(torch.float32, (2, 3, 4, 5)),
                torch.randint(0, 3, (2, 4, 5), generator=torch.Generator().manual_seed(0)))


def test_other_dtypes_give_the_cpus_results_and_errors():
    x = seeded_tensor(torch.float32, (3, 4))
    # int32 and uint8 targets, half_to_float.
    same_as_cpu(lambda t, target: F.nll_loss(t, target), x, torch.tensor([0, 1, 3], dtype=torch.int32))
    same_as_cpu(lambda t, target: F.nll_loss(t, target), x, torch.tensor([0, 1, 3], dtype=torch.uint8))
    same_as_cpu(lambda t: torch.ops.aten._softmax(t, 0, True), seeded_tensor(torch.float16, (3, 4)))
    # Double weights for float inputs: the direct path, whose CPU
    # implementation raises the CPU's error on the stream.
    same_as_cpu(lambda t, target, w: F.nll_loss(t, target, weight=w), x, torch.tensor([0, 1, 3]),
                torch.ones(4, dtype=torch.float64))
    # A target on the CPU for an openreg input: the device mix-up error.
    with pytest.raises(RuntimeError, match="openreg|device"):
        F.nll_loss(x.openreg(), torch.tensor([0, 1, 3]))
        torch.openreg.synchronize()


def test_operands_stay_alive_and_streams_are_ordered():
    losses = [F.cross_entropy(torch.full((16, 8), float(i), device="openreg"),
                              torch.zeros(16, dtype=torch.long, device="openreg")) for i in range(20)]
    stream = torch.openreg.Stream()
    a = torch.zeros(32, 8, device="openreg")
    stream.wait_stream(torch.openreg.current_stream())
    with torch.openreg.stream(stream):
        for _ in range(3):
            a = a + F.softmax(a, 1)
        total = F.log_softmax(a, 1)
    torch.openreg.current_stream().wait_stream(stream)
    for loss in losses:
        assert_same(loss, torch.tensor(-torch.log_softmax(torch.zeros(8), 0)[0].item()))
    expected = torch.zeros(32, 8)
    for _ in range(3):
        expected = expected + F.softmax(expected, 1)
    assert_same(total, F.log_softmax(expected, 1))


def test_the_direct_kernels_do_not_take_the_fallback():
    counting = CountingMeta()
    counting.replace("_log_softmax", lambda t, dim, half: torch.empty_like(t))
    counting.replace("_log_softmax_backward_data", lambda g, out, dim, dtype: torch.empty_like(g))
    counting.replace("nll_loss_forward", lambda t, target, weight, reduction, ignore:
                     (t.new_empty(() if reduction != 0 else (t.shape[0],)), t.new_empty(())))
    counting.replace("nll_loss_backward", lambda g, t, *rest: torch.empty_like(t))
    try:
        # Shapes no other test uses, so no cached meta result hides a call.
        x = seeded_tensor(torch.float32, (7, 11)).openreg().requires_grad_(True)
        loss = F.cross_entropy(x, torch.arange(7).openreg())
        loss.backward()
        torch.openreg.synchronize()
        assert counting.calls == []
        # The check can fail: a uint8 target goes to the fallback, which
        # asks nll_loss_forward's Meta kernel for its result shapes.
        F.nll_loss(seeded_tensor(torch.float32, (7, 13)).openreg(), torch.arange(7, dtype=torch.uint8).openreg())
        torch.openreg.synchronize()
        assert counting.calls == ["nll_loss_forward"]
    finally:
        counting.library._destroy()
