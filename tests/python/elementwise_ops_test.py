"""add, sub, mul and div on openreg (core/aten/elementwise_ops.cc): the
TensorIterator path and the CPU fallback it hands other calls to give the
CPU's results, dtypes and errors in every form (functional, in-place, out=)."""

import pytest
import torch

from openreg_testing import assert_same

OPS = ["add", "sub", "mul", "div"]

# The dtypes the TensorIterator path runs, and some it leaves to the fallback.
LOOP_DTYPES = [torch.float32, torch.float64, torch.complex64, torch.int64, torch.int32, torch.uint8]
FALLBACK_DTYPES = [torch.float16, torch.bfloat16]


def sample(dtype, shape, seed=0):
    generator = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(shape, generator=generator).to(dtype)
    # Nonzero, so integer division and remainders stay defined.
    return torch.randint(1, 9, shape, generator=generator).to(dtype)


def cpu_and_device(function, *arguments, **keywords):
    """`function` on CPU arguments and on the same arguments moved to openreg
    (Python numbers and CPU scalars stay where they are)."""

    def move(value):
        if isinstance(value, torch.Tensor) and value.dim() > 0:
            return value.to("openreg")
        return value

    cpu = function(*arguments, **keywords)
    device = function(*[move(a) for a in arguments], **{k: move(v) for k, v in keywords.items()})
    return device, cpu


@pytest.mark.parametrize("dtype", LOOP_DTYPES + FALLBACK_DTYPES, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_functional_with_broadcasting(op, dtype):
    a, b = sample(dtype, (4, 1, 3), 1), sample(dtype, (5, 3), 2)
    device, cpu = cpu_and_device(getattr(torch, op), a, b)
    assert device.dtype == cpu.dtype
    assert_same(device, cpu)


@pytest.mark.parametrize("number", [2, 0.5, True, 1 + 2j], ids=["int", "float", "bool", "complex"])
@pytest.mark.parametrize("dtype", LOOP_DTYPES + FALLBACK_DTYPES, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_python_numbers_promote_as_on_the_cpu(op, dtype, number):
    a = sample(dtype, (3, 4))
    try:
        cpu = getattr(torch, op)(a, number)
    except RuntimeError as cpu_error:
        # The fallback's kernels raise on the stream: on threaded_sim at the
        # next synchronization, here the copy back.
        with pytest.raises(RuntimeError, match=str(cpu_error).split("\n")[0][:40]):
            getattr(torch, op)(a.to("openreg"), number).cpu()
        return
    device = getattr(torch, op)(a.to("openreg"), number)
    assert device.dtype == cpu.dtype
    assert_same(device, cpu)


@pytest.mark.parametrize("dtype", LOOP_DTYPES, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_in_place_with_tensor_number_and_cpu_scalar(op, dtype):
    if op == "div" and not (dtype.is_floating_point or dtype.is_complex):
        pytest.skip("in-place true division of an integer tensor is an error (tested below)")
    a = sample(dtype, (3, 4))
    for other in [sample(dtype, (4,), 3), 3, sample(dtype, (), 4)]:
        on_device = a.to("openreg")
        other_on_device = other.to("openreg") if isinstance(other, torch.Tensor) and other.dim() > 0 else other
        result = getattr(on_device, op + "_")(other_on_device)
        assert result is on_device
        assert_same(on_device, getattr(a.clone(), op + "_")(other))


@pytest.mark.parametrize("op", OPS)
def test_out_resizes_and_returns_out(op):
    a, b = sample(torch.float32, (2, 3), 1), sample(torch.float32, (3,), 2)
    out = torch.empty(0, device="openreg")
    result = getattr(torch, op)(a.to("openreg"), b.to("openreg"), out=out)
    assert result is out
    assert_same(out, getattr(torch, op)(a, b))


def test_alpha_on_add_and_sub():
    a, b = sample(torch.float64, (3, 3), 1), sample(torch.float64, (3, 3), 2)
    assert_same(torch.add(a.openreg(), b.openreg(), alpha=2.5), torch.add(a, b, alpha=2.5))
    assert_same(torch.sub(a.openreg(), b.openreg(), alpha=-3), torch.sub(a, b, alpha=-3))
    ints = sample(torch.int64, (3,))
    assert_same(torch.add(ints.openreg(), 2, alpha=3), torch.add(ints, 2, alpha=3))


def test_mixed_dtypes_and_conjugates_take_the_fallback_with_the_same_results():
    floats, ints = sample(torch.float32, (3, 4), 1), sample(torch.int64, (3, 4), 2)
    for op in OPS:
        device, cpu = cpu_and_device(getattr(torch, op), floats, ints)
        assert device.dtype == cpu.dtype
        assert_same(device, cpu)
    complex_values = sample(torch.complex64, (5,))
    conjugated = complex_values.openreg().conj()
    assert conjugated.is_conj()
    assert_same(conjugated * complex_values.openreg(), complex_values.conj() * complex_values)
    assert_same(torch.div(ints.openreg(), ints.openreg()), torch.div(ints, ints))


def test_views_and_non_contiguous_operands():
    a = sample(torch.float32, (6, 8))
    on_device = a.openreg()
    assert_same(on_device.t() + on_device.t(), a.t() + a.t())
    assert_same(on_device[::2, 1::3] * 3, a[::2, 1::3] * 3)
    view = on_device[1:4]
    view.mul_(2)
    expected = a.clone()
    expected[1:4].mul_(2)
    assert_same(on_device, expected)


def test_in_place_that_would_broadcast_raises_at_the_op():
    # Raised by the calling thread, before anything is enqueued, on every
    # driver: the iterator checks the shapes.
    target = torch.ones(2, 3, device="openreg")
    with pytest.raises(RuntimeError, match=r"output with shape \[2, 3\] doesn't match the broadcast shape \[4, 2, 3\]"):
        target.add_(torch.ones(4, 2, 3, device="openreg"))
    assert_same(target, torch.ones(2, 3))


def test_errors_are_atens_and_the_device_stays_usable():
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        torch.sub(torch.ones(2, dtype=torch.bool, device="openreg"), torch.ones(2, dtype=torch.bool, device="openreg"))
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
        torch.add(torch.ones(2, dtype=torch.int64, device="openreg"), 1, alpha=0.5)
    # Integer true division goes to the fallback, whose kernel raises on the
    # stream: on threaded_sim at the next synchronization.
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torch.ones(2, dtype=torch.int64, device="openreg").div_(2)
        torch.openreg.synchronize()
    with pytest.raises(RuntimeError, match="same device|devices"):
        torch.ones(2, device="openreg") + torch.ones(2)
    with pytest.raises(RuntimeError, match="size of tensor a"):
        torch.ones(2, device="openreg") * torch.ones(3, device="openreg")
    assert_same(torch.ones(2, device="openreg") * 4, torch.full((2,), 4.0))


def test_operands_stay_alive_until_the_loop_ran():
    # Python drops every input right after enqueueing; the stream still reads
    # them (on threaded_sim, later).
    results = [torch.full((1024,), float(i), device="openreg") * torch.full((1024,), 2.0, device="openreg")
               for i in range(50)]
    torch.openreg.synchronize()
    for i, result in enumerate(results):
        assert_same(result, torch.full((1024,), 2.0 * i))


def test_ordered_with_other_streams_work():
    stream = torch.openreg.Stream()
    a = torch.zeros(1 << 16, device="openreg")
    stream.wait_stream(torch.openreg.current_stream())
    with torch.openreg.stream(stream):
        for _ in range(20):
            a.add_(1)
    stream.synchronize()
    assert_same(a, torch.full((1 << 16,), 20.0))


@pytest.mark.parametrize("dtype", LOOP_DTYPES + FALLBACK_DTYPES, ids=str)
def test_number_minus_tensor(dtype):
    # rsub: ATen's composite kernel passes the number as sub's first operand.
    a = sample(dtype, (3, 4))
    if dtype == torch.uint8:
        number = 9
    else:
        number = 1 if not (dtype.is_floating_point or dtype.is_complex) else 0.5
    device = number - a.to("openreg")
    assert device.dtype == (number - a).dtype
    assert_same(device, number - a)
    assert_same(torch.rsub(a.to("openreg"), number, alpha=2), torch.rsub(a, number, alpha=2))


@pytest.mark.parametrize("dtype", LOOP_DTYPES + FALLBACK_DTYPES, ids=str)
def test_in_place_mul_by_a_number_from_cpp(dtype):
    # aten::mul_.Scalar is what C++ callers reach (the optimizers' foreach
    # kernels); Python's t.mul_(x) takes mul_.Tensor.
    a = sample(dtype, (3, 4))
    number = 3 if not (dtype.is_floating_point or dtype.is_complex) else 0.999
    on_device = a.to("openreg")
    result = torch.ops.aten.mul_.Scalar(on_device, number)
    assert result is on_device
    assert_same(on_device, torch.ops.aten.mul_.Scalar(a.clone(), number))


def test_number_first_operands_run_one_loop_without_copying_the_number():
    params = [sample(torch.float32, (4, 3), seed).to("openreg") for seed in range(3)]
    expected = [p.cpu() * 0.999 for p in params]
    torch._foreach_mul_(params, 0.999)  # warm-up outside the profile
    expected = [e * 0.999 for e in expected]
    with torch.profiler.profile() as profile:
        torch._foreach_mul_(params, 0.999)
    names = [event.name for event in profile.events()]
    assert "aten::_to_copy" not in names and "aten::copy_" not in names, names
    # One launch for the three loops (Note [One launch per foreach call]); a
    # mul_ that went to the fallback would launch on its own.
    assert names.count("openreg launch") == 1, names
    for param, value in zip(params, expected):
        assert_same(param, value)
    with torch.profiler.profile() as profile:
        complement = 1 - params[0]
    names = [event.name for event in profile.events()]
    assert "aten::_to_copy" not in names and names.count("openreg launch") == 1, names
    assert_same(complement, 1 - params[0].cpu())


def test_functional_results_are_allocated_directly_as_on_the_cpu():
    # CPU eager's structured kernels allocate their results without a
    # dispatched aten::empty; so does openreg's iterator (FreshOutputIterator).
    a = sample(torch.float32, (4, 3)).to("openreg")
    a + a  # warm-up outside the profile
    with torch.profiler.profile() as profile:
        result = a + a
        root = torch.sqrt(a * a)
    names = [event.name for event in profile.events()]
    assert "aten::empty" not in names and "aten::empty_strided" not in names, names
    assert_same(result, a.cpu() + a.cpu())
    assert_same(root, torch.sqrt(a.cpu() * a.cpu()))


LAYOUTS = {
    "contiguous": lambda t: t,
    "channels_last": lambda t: t.contiguous(memory_format=torch.channels_last),
    "transposed": lambda t: t.transpose(1, 3),
    "expanded": lambda t: t[:, :1].expand(-1, 3, -1, -1),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_functional_results_have_the_cpus_strides(layout):
    base = sample(torch.float32, (2, 3, 4, 5))
    x, x_device = LAYOUTS[layout](base), LAYOUTS[layout](base.to("openreg"))
    assert x_device.stride() == x.stride()
    y = sample(torch.float32, (x.shape[-1],))
    for function in (lambda p, q: p + q, lambda p, q: p * q, lambda p, q: torch.relu(p - q)):
        device = function(x_device, y.to("openreg"))
        cpu = function(x, y)
        assert device.stride() == cpu.stride(), layout
        assert_same(device, cpu)


def test_functional_results_go_to_the_operands_device_not_the_current_one():
    if torch.openreg.device_count() < 2:
        pytest.skip("needs two openreg devices")
    a = sample(torch.float32, (64, 64)).to("openreg:1")
    with torch.openreg.device(0):
        before = (torch.openreg.memory_allocated(0), torch.openreg.memory_allocated(1))
        result = a + a
        assert result.device == torch.device("openreg:1")
        assert torch.openreg.memory_allocated(0) == before[0]
        assert torch.openreg.memory_allocated(1) > before[1]
    assert_same(result, a.cpu() + a.cpu())
