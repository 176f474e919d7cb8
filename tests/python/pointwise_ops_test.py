"""sqrt, relu, threshold_backward, addcmul, addcdiv, lerp, pow by a number, fill_ and zero_ on
openreg (core/aten/pointwise_ops.cc): the TensorIterator path and the CPU
fallback it hands other calls to give the CPU's results, dtypes and errors in
every form (functional, in-place, out=), and optimizers that use them train as
on the CPU."""

import pytest
import torch

from openreg_testing import CountingMeta, assert_same, same_result_or_error, seeded_tensor

# Dtypes the loops run, and ones they leave to the fallback.
DTYPES = [torch.float32, torch.float64, torch.complex64, torch.int64, torch.int32, torch.uint8, torch.bool,
          torch.float16, torch.bfloat16]


def sample(dtype, shape, seed=0):
    # Positive integers: sqrt and addcdiv (which divides) stay defined on them.
    return seeded_tensor(dtype, shape, seed, integers=(1, 9))


# name -> (function, shapes of its tensor arguments (broadcasting), numbers).
OPS = {
    "sqrt": (torch.sqrt, [(3, 4)], {}),
    "relu": (torch.relu, [(3, 4)], {}),
    "threshold_backward": (torch.ops.aten.threshold_backward, [(4, 1, 3), (5, 3)], {"threshold": 0.25}),
    "addcmul": (torch.addcmul, [(4, 1, 3), (5, 3), (3,)], {"value": 2}),
    "addcdiv": (torch.addcdiv, [(4, 1, 3), (5, 3), (3,)], {"value": 0.5}),
    "lerp": (torch.lerp, [(4, 1, 3), (5, 3)], {"weight": 0.3}),
}


def arguments_of(name, dtype):
    function, shapes, numbers = OPS[name]
    tensors = [sample(dtype, shape, seed) for seed, shape in enumerate(shapes)]
    if name == "threshold_backward":
        return function, tensors + [numbers["threshold"]], {}
    return function, tensors, numbers


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", OPS)
def test_functional_with_broadcasting(name, dtype):
    function, arguments, keywords = arguments_of(name, dtype)
    same_result_or_error(function, *arguments, **keywords)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["sqrt", "relu", "addcmul", "addcdiv", "lerp"])
def test_in_place_returns_self(name, dtype):
    _, arguments, keywords = arguments_of(name, dtype)
    # In place, self keeps its shape: the others broadcast to it.
    arguments[0] = sample(dtype, (4, 5, 3), 7)

    def in_place(self, *rest, **numbers):
        result = getattr(self, name + "_")(*rest, **numbers)
        assert result is self
        return self

    same_result_or_error(in_place, *arguments, **keywords)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64], ids=str)
@pytest.mark.parametrize("name", ["sqrt", "threshold_backward", "addcmul", "addcdiv", "lerp"])
def test_out_resizes_and_returns_out(name, dtype):
    function, arguments, keywords = arguments_of(name, dtype)
    out_name = "grad_input" if name == "threshold_backward" else "out"
    if name == "threshold_backward":
        function = torch.ops.aten.threshold_backward.grad_input

    def with_out(*tensors, **numbers):
        out = torch.empty(0, dtype=tensors[0].dtype, device=tensors[0].device)
        result = function(*tensors, **numbers, **{out_name: out})
        assert result is out
        return out

    same_result_or_error(with_out, *arguments, **keywords)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fill_and_zero(dtype):
    for value in [0, 3, 2.5, True]:
        same_result_or_error(lambda t: t.fill_(value), sample(dtype, (3, 5)))
    same_result_or_error(lambda t: t.zero_(), sample(dtype, (3, 5)))


# The exponents ATen's pow treats apart (0 fills, 1 copies; 2, 3, 0.5, -0.5, -1 and -2 have exact loops), others,
# and those the loop leaves to the fallback (0, booleans, a complex power of a real tensor).
EXPONENTS = [2, 3, 0.5, -0.5, -1, -2, 2.5, -1.5, 1, 1.0, 0, 0.0, True, 1 + 1j]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("exponent", EXPONENTS, ids=repr)
def test_pow_by_a_number_gives_the_cpus_bits_in_every_form(exponent, dtype):
    base = sample(dtype, (4, 5, 3))
    # Bit for bit: the loop is the CPU's, and self ** 1 is a copy (NaNs where the CPU's are: negative bases).
    exact = {"rtol": 0, "atol": 0, "equal_nan": True}

    def in_place(self):
        result = self.pow_(exponent)
        assert result is self
        return self

    def with_out(self):
        out = torch.empty(0, dtype=self.dtype, device=self.device)
        assert torch.pow(self, exponent, out=out) is out
        return out

    for function in [lambda t: torch.pow(t, exponent), lambda t: t ** exponent, in_place, with_out]:
        device_base = base.openreg()
        try:
            expected = function(base.clone())
        except RuntimeError as cpu_error:
            with pytest.raises(RuntimeError, match=str(cpu_error).split("\n")[0][:40]):
                function(device_base)
                torch.openreg.synchronize()
            continue
        result = function(device_base)
        assert result.dtype == expected.dtype and result.stride() == expected.stride()
        assert_same(result, expected, **exact)


def test_pow_by_a_number_takes_the_loop_and_leaves_the_rest_to_the_fallback():
    counting = CountingMeta()
    # The fallback sizes its results with the op's Meta kernel (a functional call it does not take computes
    # through the out= form); the loop never asks it.
    counting.replace("pow.Tensor_Scalar", lambda t, exponent: torch.empty_like(
        t, dtype=torch.result_type(t, exponent)))
    counting.replace("pow.Tensor_Scalar_out", lambda t, exponent, *, out: out.resize_(t.shape))
    try:
        # A shape no other test uses, so no cached meta result hides a call.
        x = seeded_tensor(torch.float32, (9, 7)).openreg()
        for exponent in [2, 1, 0.5, 2.5]:
            torch.pow(x, exponent)
            x.clone().pow_(exponent)
            torch.pow(x, exponent, out=torch.empty(0, device="openreg"))
        torch.openreg.synchronize()
        assert counting.calls == []
        torch.pow(seeded_tensor(torch.int64, (9, 7)).openreg(), 2)
        torch.pow(x, 0)
        torch.pow(x, True, out=torch.empty(0, device="openreg"))
        torch.openreg.synchronize()
        assert counting.calls == ["pow.Tensor_Scalar_out"] * 3
    finally:
        counting.library._destroy()


def test_pow_of_views_and_errors_at_the_call():
    a = sample(torch.float64, (6, 8)).abs() + 0.5
    da = a.openreg()
    assert_same(da.t()[::2] ** 3, a.t()[::2] ** 3, rtol=0, atol=0)
    assert_same(torch.pow(da[:, 1::3], 1), torch.pow(a[:, 1::3], 1), rtol=0, atol=0)
    da[1:4].pow_(0.5)
    a[1:4].pow_(0.5)
    assert_same(da, a, rtol=0, atol=0)
    # Raised by the calling thread, before anything is enqueued.
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        torch.pow(da, 2, out=da[:, :1].expand(6, 8))
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        torch.pow(torch.ones(3, dtype=torch.int64, device="openreg"), -1)
    assert_same(da ** 2, a ** 2, rtol=0, atol=0)


def test_views_and_non_contiguous_operands():
    a, b, c = (sample(torch.float32, (6, 8), seed) for seed in range(3))
    da, db, dc = a.openreg(), b.openreg(), c.openreg()
    assert_same(torch.addcmul(da.t(), db.t(), dc[::1].t(), value=3), torch.addcmul(a.t(), b.t(), c.t(), value=3))
    assert_same(torch.relu(da[::2, 1::3]), torch.relu(a[::2, 1::3]))
    assert_same(torch.sqrt(da.abs()[:, ::2]), torch.sqrt(a.abs()[:, ::2]))
    da[1:4].lerp_(db[1:4], 0.5)
    a[1:4].lerp_(b[1:4], 0.5)
    assert_same(da, a)
    db[:, ::2].zero_()
    b[:, ::2].zero_()
    assert_same(db, b)
    dc.t()[2:].fill_(-1.5)
    c.t()[2:].fill_(-1.5)
    assert_same(dc, c)


def test_mixed_dtypes_and_conjugates_take_the_fallback_with_the_same_results():
    floats, doubles = sample(torch.float32, (3, 4), 1), sample(torch.float64, (3, 4), 2)
    same_result_or_error(torch.addcmul, floats, doubles, floats)
    same_result_or_error(torch.addcdiv, doubles, floats, doubles, value=2)
    complex_values = sample(torch.complex64, (5,))
    conjugated = complex_values.openreg().conj()
    assert conjugated.is_conj()
    assert_same(torch.sqrt(conjugated), torch.sqrt(complex_values.conj()))
    assert_same(torch.lerp(conjugated, complex_values.openreg(), 0.5),
                torch.lerp(complex_values.conj(), complex_values, 0.5))
    ints = sample(torch.int64, (3, 4))
    # Integer sqrt promotes to float: a conversion, so the fallback.
    assert_same(torch.sqrt(ints.openreg()), torch.sqrt(ints))


def test_errors_come_at_the_call_and_the_device_stays_usable():
    # Raised by the calling thread before anything is enqueued, on every
    # driver, without a synchronization.
    target = torch.ones(2, 3, device="openreg")
    with pytest.raises(RuntimeError, match=r"output with shape \[2, 3\] doesn't match the broadcast shape \[4, 2, 3\]"):
        target.addcmul_(torch.ones(4, 2, 3, device="openreg"), torch.ones(3, device="openreg"))
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        target.fill_(1e300)
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        target.addcdiv_(target, target, value=1e300)
    with pytest.raises(RuntimeError, match="same device|devices"):
        torch.lerp(target, torch.ones(2, 3), 0.5)
    with pytest.raises(RuntimeError, match="size of tensor a"):
        torch.addcmul(target, torch.ones(5, device="openreg"), target)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        torch.sqrt(target, out=target[:, :1].expand(2, 3))
    assert_same(target, torch.ones(2, 3))
    # ATen's own errors for calls the fallback takes.
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        ints = torch.ones(3, dtype=torch.int64, device="openreg")
        torch.addcdiv(ints, ints, ints)
        torch.openreg.synchronize()
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        torch.relu(torch.ones(2, dtype=torch.bool, device="openreg"))
        torch.openreg.synchronize()
    assert_same(torch.relu(target - 2) + 1, torch.ones(2, 3))


def test_operands_stay_alive_until_the_loop_ran():
    results = [torch.addcmul(torch.full((1024,), float(i), device="openreg"), torch.full((1024,), 2.0, device="openreg"),
                             torch.full((1024,), 3.0, device="openreg")) for i in range(50)]
    torch.openreg.synchronize()
    for i, result in enumerate(results):
        assert_same(result, torch.full((1024,), i + 6.0))


def test_ordered_with_other_streams_work():
    stream = torch.openreg.Stream()
    a = torch.ones(1 << 16, device="openreg")
    stream.wait_stream(torch.openreg.current_stream())
    with torch.openreg.stream(stream):
        for _ in range(10):
            a.addcmul_(a, a, value=0.0)
            a.lerp_(torch.full_like(a, 3.0), 0.5)
        a.sqrt_()
    stream.synchronize()
    expected = torch.ones(1 << 16)
    for _ in range(10):
        expected.lerp_(torch.full_like(expected, 3.0), 0.5)
    assert_same(a, expected.sqrt())


def train(device, optimizer_class, steps=5, **options):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)).to(device)
    optimizer = optimizer_class(model.parameters(), **options)
    x, y = torch.randn(32, 8).to(device), torch.randn(32, 2).to(device)
    for _ in range(steps):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return [p.detach() for p in model.parameters()]


@pytest.mark.parametrize("optimizer_class, options", [
    (torch.optim.Adam, {"foreach": True}),
    (torch.optim.Adam, {"foreach": False}),
    (torch.optim.AdamW, {"foreach": True, "amsgrad": True}),
    (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "foreach": True}),
], ids=["adam-foreach", "adam-for-loop", "adamw-amsgrad", "sgd-momentum"])
def test_optimizers_train_as_on_the_cpu(optimizer_class, options):
    for device_parameter, cpu_parameter in zip(train("openreg", optimizer_class, **options),
                                               train("cpu", optimizer_class, **options)):
        assert_same(device_parameter, cpu_parameter)
