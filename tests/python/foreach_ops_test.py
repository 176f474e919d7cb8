"""`_foreach_*` ops in one launch each (Note [One launch per foreach call],
core/aten/foreach_ops.cc): the CPU's results to the last bit, the CPU's errors
at the call, one piece of device work per call, and the order of everything
around that piece kept."""

import os
import re

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from openreg_testing import on_device, run_python

DRIVER = os.environ.get("OPENREG_DRIVER", "cpu_sim")
# Each index its own shape, as a model's parameters.
SHAPES = [(5, 7), (3,), (2, 3, 4), (1,), (16, 16)]


def lists(count, dtype=torch.float32, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [[(torch.rand(shape, generator=generator) * 4 + 0.5).to(dtype) for shape in SHAPES]
            for _ in range(count)]


def assert_lists_equal(device, cpu):
    assert len(device) == len(cpu)
    for d, c in zip(device, cpu):
        assert d.device.type == "openreg" and d.dtype == c.dtype
        assert torch.equal(d.cpu(), c), (d.cpu(), c)


NUMBERS = [0.5, -1.25, 3.0, 2.0, 0.75]

# name -> (function, how many tensor lists, the other arguments); in-place
# calls return None and are checked on their first list.
CALLS = {
    "add_ Scalar": (torch._foreach_add_, 1, lambda: [0.5]),
    "add List alpha": (lambda a, b: torch._foreach_add(a, b, alpha=-2.0), 2, lambda: []),
    "add_ ScalarList": (torch._foreach_add_, 1, lambda: [NUMBERS]),
    "add_ Tensor": (torch._foreach_add_, 1, lambda: [torch.tensor(1.5)]),
    "sub_ List": (torch._foreach_sub_, 2, lambda: []),
    "mul_ Scalar": (torch._foreach_mul_, 1, lambda: [0.9]),
    "mul_ List": (torch._foreach_mul_, 2, lambda: []),
    "mul ScalarList": (torch._foreach_mul, 1, lambda: [NUMBERS]),
    "div_ ScalarList": (torch._foreach_div_, 1, lambda: [NUMBERS]),
    "div_ List": (torch._foreach_div_, 2, lambda: []),
    "maximum_ List": (torch._foreach_maximum_, 2, lambda: []),
    "pow ScalarAndTensor": (lambda a: torch._foreach_pow(0.9, a), 1, lambda: []),
    "lerp_ Scalar": (torch._foreach_lerp_, 2, lambda: [0.1]),
    "lerp_ List": (torch._foreach_lerp_, 3, lambda: []),
    "addcmul_ Scalar": (torch._foreach_addcmul_, 3, lambda: [0.999]),
    "addcdiv_ ScalarList": (torch._foreach_addcdiv_, 3, lambda: [NUMBERS]),
    "addcdiv_ Tensor": (torch._foreach_addcdiv_, 3, lambda: [torch.tensor(NUMBERS, dtype=torch.float64)]),
    "sqrt": (torch._foreach_sqrt, 1, lambda: []),
    "sqrt_": (torch._foreach_sqrt_, 1, lambda: []),
    "neg_": (torch._foreach_neg_, 1, lambda: []),
    "abs": (torch._foreach_abs, 1, lambda: []),
    "reciprocal_": (torch._foreach_reciprocal_, 1, lambda: []),
    "zero_": (torch._foreach_zero_, 1, lambda: []),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_results_are_the_cpus_to_the_last_bit(name, dtype):
    function, count, others = CALLS[name]
    cpu_lists = lists(count, dtype)
    device_lists = on_device(cpu_lists)
    cpu = function(*cpu_lists, *others())
    device = function(*device_lists, *others())
    if cpu is None:
        cpu, device = cpu_lists[0], device_lists[0]
    assert_lists_equal(list(device), list(cpu))


# The overloads core/aten/foreach_ops.cc registers: one launch each.
GATHERED_OVERLOADS = [
    "_foreach_abs", "_foreach_abs_", "_foreach_neg", "_foreach_neg_", "_foreach_sqrt", "_foreach_sqrt_",
    "_foreach_reciprocal", "_foreach_reciprocal_", "_foreach_zero_",
] + [f"_foreach_{op}{inplace}.{overload}" for op in ("add", "mul", "div")
     for inplace in ("", "_") for overload in ("Scalar", "ScalarList", "List", "Tensor")] + [
    f"_foreach_sub{inplace}.{overload}" for inplace in ("", "_") for overload in ("Scalar", "ScalarList", "List")
] + ["_foreach_maximum.List", "_foreach_maximum_.List", "_foreach_pow.List", "_foreach_pow_.List",
     "_foreach_pow.Scalar", "_foreach_pow_.Scalar", "_foreach_pow.ScalarAndTensor"] + [
    f"_foreach_lerp{inplace}.{overload}" for inplace in ("", "_") for overload in ("Scalar", "List")
] + [f"_foreach_{op}{inplace}.{overload}" for op in ("addcmul", "addcdiv") for inplace in ("", "_")
     for overload in ("Scalar", "ScalarList", "Tensor")]


def test_every_gathered_overload_has_its_openreg_kernel():
    # Registration skips an overload silently when the CPU has a kernel of its
    # own for it; then it would keep the per-tensor path unnoticed.
    assert len(GATHERED_OVERLOADS) == 62
    missing = [name for name in GATHERED_OVERLOADS
               if not torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{name}", "PrivateUse1")]
    assert missing == []


def test_a_tensor_listed_twice_is_updated_twice_in_order():
    a, b = torch.full((4,), 3.0), torch.full((2,), 5.0)
    device_a, device_b = a.to("openreg"), b.to("openreg")
    torch._foreach_mul_([a, b, a], [2.0, 3.0, 4.0])
    torch._foreach_add_([a, b, a], 1.0)
    torch._foreach_mul_([device_a, device_b, device_a], [2.0, 3.0, 4.0])
    torch._foreach_add_([device_a, device_b, device_a], 1.0)
    assert_lists_equal([device_a, device_b], [a, b])


def test_loops_and_fallback_calls_inside_one_op_keep_their_order():
    # One memory updated three times: as float32 by gathered loops, and in
    # between as float16, which the loops leave to the CPU fallback. The
    # result's bits depend on the order the three updates run in: the
    # fallback's work must not overtake the loop gathered before it.
    a = torch.linspace(-1.0, 1.0, 8)
    ends = [torch.full((8,), 4.0), torch.full((16,), -2.0, dtype=torch.float16), torch.full((8,), 7.0)]
    device_a, device_ends = a.to("openreg"), on_device(ends)
    torch._foreach_lerp_([a, a.view(torch.float16), a], ends, 0.3)
    torch._foreach_lerp_([device_a, device_a.view(torch.float16), device_a], device_ends, 0.3)
    assert torch.equal(device_a.cpu().view(torch.int32), a.view(torch.int32))


def test_an_error_at_an_index_is_the_cpus_and_the_indices_before_it_are_updated():
    cpu_lists = lists(2)
    cpu_lists[1][2] = torch.ones(9)  # index 2 does not match
    device_lists = on_device(cpu_lists)
    with pytest.raises(RuntimeError) as cpu_error:
        torch._foreach_add_(*cpu_lists)
    with pytest.raises(RuntimeError, match=re.escape(str(cpu_error.value).split("\n")[0])):
        torch._foreach_add_(*device_lists)
    # ATen's composite had updated indices 0 and 1 when index 2 raised.
    assert_lists_equal(device_lists[0], cpu_lists[0])
    # And the device keeps working.
    torch._foreach_mul_(cpu_lists[0], 2.0)
    torch._foreach_mul_(device_lists[0], 2.0)
    assert_lists_equal(device_lists[0], cpu_lists[0])


def test_an_error_in_an_out_of_place_call_leaves_the_device_working():
    # The results made before the failing index are dropped as the error
    # propagates, before their loops are launched: the loops own them.
    cpu_lists = lists(2)
    wrong = [cpu_lists[0], cpu_lists[1][:2] + [torch.ones(9)] + cpu_lists[1][3:]]
    with pytest.raises(RuntimeError) as cpu_error:
        torch._foreach_add(*wrong)
    with pytest.raises(RuntimeError, match=re.escape(str(cpu_error.value).split("\n")[0])):
        torch._foreach_add(*on_device(wrong))
    device_lists = on_device(cpu_lists)
    assert_lists_equal(list(torch._foreach_add(*device_lists)), list(torch._foreach_add(*cpu_lists)))


def _device_kernels(function):
    torch.openreg.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        function()
        torch.openreg.synchronize()
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]


def test_each_call_is_one_piece_of_device_work_named_after_the_op():
    x, y = on_device(lists(2))
    kernels = _device_kernels(lambda: torch._foreach_lerp_(x, y, 0.25))
    assert kernels == ["aten::_foreach_lerp_"], kernels
    # A fresh result per index, one piece still.
    kernels = _device_kernels(lambda: torch._foreach_sqrt(x))
    assert kernels == ["aten::_foreach_sqrt"], kernels


def test_an_optimizer_step_launches_one_piece_per_foreach_op():
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)).to("openreg")
    optimizer = torch.optim.AdamW(model.parameters(), weight_decay=0.01)
    model(torch.randn(4, 8, device="openreg")).sum().backward()
    optimizer.step()
    kernels = _device_kernels(optimizer.step)
    # Four parameters: ATen's composite would launch one kernel per parameter
    # for each foreach op.
    assert len(kernels) < 12, kernels
    assert all(name.startswith("aten::_foreach_") for name in kernels), kernels


def test_two_streams_and_the_events_between_them_see_the_gathered_work():
    cpu_x, cpu_y = lists(2)
    x, y = on_device([cpu_x, cpu_y])
    side = torch.openreg.Stream()
    torch.openreg.synchronize()
    with torch.openreg.stream(side):
        torch._foreach_lerp_(x, y, 0.5)
        done = torch.openreg.Event()
        done.record(side)
    torch.openreg.current_stream().wait_event(done)
    sums = [t.sum() for t in x]
    torch._foreach_lerp_(cpu_x, cpu_y, 0.5)
    for device_sum, t in zip(sums, cpu_x):
        assert torch.equal(device_sum.cpu(), t.sum())


def test_a_captured_call_replays_the_same_work():
    cpu_x, cpu_y = lists(2)
    x, y = on_device([cpu_x, cpu_y])
    torch._foreach_lerp_(x, y, 0.5)  # warm-up, as graphs want
    torch._foreach_lerp_(cpu_x, cpu_y, 0.5)
    graph = torch.openreg.Graph()
    with torch.openreg.graph(graph):
        torch._foreach_lerp_(x, y, 0.5)
    for _ in range(3):
        graph.replay()
        torch._foreach_lerp_(cpu_x, cpu_y, 0.5)
    torch.openreg.synchronize()
    assert_lists_equal(x, cpu_x)


def test_a_refused_launch_raises_at_the_op_and_the_process_goes_on():
    # The first launch of the process is the foreach's piece, and the driver
    # refuses it.
    result = run_python("""
        import torch
        xs = [torch.empty(4, device="openreg") for _ in range(3)]
        try:
            torch._foreach_zero_(xs)
        except RuntimeError as error:
            print("raised:", error)
        torch._foreach_zero_(xs)
        torch._foreach_add_(xs, 2.0)
        print("after:", [t.cpu().tolist() for t in xs])
    """, env={"OPENREG_DRIVER": DRIVER,
              "OPENREG_DRIVER_OPTIONS": "fault_points=launch_host_func,fault_on_call=1"})
    assert result.returncode == 0, result.stderr
    assert "raised: openreg: aten::_foreach_zero_ failed on openreg:0" in result.stdout, result.stdout
    assert "after: " + str([[2.0] * 4] * 3) in result.stdout, result.stdout
