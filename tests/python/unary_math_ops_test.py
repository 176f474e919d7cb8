"""neg, abs, sign, sgn, exp, log, log1p, expm1, sqrt, rsqrt, reciprocal, sin, cos and clamp by numbers on openreg
(core/aten/unary_math_ops.cc): the TensorIterator path and the CPU fallback it hands other calls to give the CPU's
bits, dtypes and errors in every form (functional, in-place, out=), the loops take exactly the calls they can run
as the CPU does, and gradients through them match the CPU's."""

import functools
import math

import pytest
import torch
import torch.nn.functional as F

from openreg_testing import CountingMeta, assert_same, same_result_or_error, seeded_tensor

aten = torch.ops.aten

# Dtypes the loops run, and ones they leave to the fallback (integers, which the float functions promote; bool,
# which neg and abs refuse; half and bfloat16).
DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128, torch.int64, torch.int32, torch.bool,
          torch.float16, torch.bfloat16]

same_bits_or_error = functools.partial(same_result_or_error, tolerances=lambda dtype: {"rtol": 0, "atol": 0})

# name -> (functional, in-place, out= overload, numbers), each taking (self, **numbers).
OPS = {
    name: (getattr(aten, name), getattr(aten, name + "_"), getattr(aten, name).out, {})
    for name in ("neg", "abs", "sign", "sgn", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "sin",
                 "cos")
}
OPS.update({
    "clamp": (aten.clamp, aten.clamp_, aten.clamp.out, {"min": -0.5, "max": 0.75}),
    "clamp min": (aten.clamp, aten.clamp_, aten.clamp.out, {"min": -0.5}),
    "clamp max": (aten.clamp, aten.clamp_, aten.clamp.out, {"max": 0.75}),
    "clamp by integers": (aten.clamp, aten.clamp_, aten.clamp.out, {"min": -1, "max": 2}),
    "clamp min above max": (aten.clamp, aten.clamp_, aten.clamp.out, {"min": 1, "max": -1}),
    "clamp by one NaN": (aten.clamp, aten.clamp_, aten.clamp.out, {"min": math.nan}),
    "clamp by one NaN above": (aten.clamp, aten.clamp_, aten.clamp.out, {"max": math.nan}),
    "clamp by NaN and a number": (aten.clamp, aten.clamp_, aten.clamp.out, {"min": math.nan, "max": 1}),
    "clamp by infinities": (aten.clamp, aten.clamp_, aten.clamp.out, {"min": -math.inf, "max": math.inf}),
})


def with_specials(x):
    """`x` with zeros, infinities and NaN in its first elements where its dtype has them: the loops' edge cases
    (log of 0, reciprocal of 0, sign of NaN)."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        return x
    x = x.clone()
    flat = x.view(-1)
    flat[:4] = torch.tensor([0.0, math.inf, -math.inf, math.nan], dtype=x.dtype)
    return x


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", OPS)
def test_every_form_gives_the_cpus_bits(name, dtype):
    function, in_place, out_overload, numbers = OPS[name]
    for x in (with_specials(seeded_tensor(dtype, (6, 5))), seeded_tensor(dtype, (5, 6), 1).t()):
        same_bits_or_error(function, x, **numbers)
        same_bits_or_error(lambda t: out_overload(t, **numbers, out=torch.empty(0, dtype=t.dtype, device=t.device)),
                           x)

        def in_place_call(t):
            result = in_place(t, **numbers)
            assert result is t
            return t
        same_bits_or_error(in_place_call, x.clone())


def test_the_loops_take_their_calls_and_leave_the_rest_to_the_fallback():
    counting = CountingMeta()
    # The fallback sizes an out= call's result, and a functional call's it does not take, with the op's Meta
    # kernel; the loops never ask it.
    for name in ("neg", "abs", "sgn", "exp", "log", "rsqrt", "reciprocal", "sin"):
        counting.replace(name, lambda t: torch.empty_like(t, dtype=torch.promote_types(t.dtype, torch.float32)))
        counting.replace(name + ".out", lambda t, *, out: out.resize_(t.shape))
    counting.replace("clamp", lambda t, min=None, max=None: torch.empty_like(t, dtype=torch.float32))
    counting.replace("clamp.out", lambda t, min=None, max=None, *, out: out.resize_(t.shape))
    try:
        # A shape no other test uses, so no cached meta result hides a call.
        x = seeded_tensor(torch.float32, (11, 3)).openreg()
        for name in ("neg", "abs", "sgn", "exp", "log", "rsqrt", "reciprocal", "sin"):
            getattr(torch, name)(x)
            getattr(torch, name)(x, out=torch.empty(0, device="openreg"))
        torch.clamp(x, max=1.0)
        torch.clamp(x, -1, 1, out=torch.empty(0, device="openreg"))
        torch.openreg.synchronize()
        assert counting.calls == []
        # Integers promote to float: a conversion, the fallback's. An integer clamp by a float bound too, and a
        # NaN bound, for which ATen's kernel fills the result with NaN without its loop.
        integers = seeded_tensor(torch.int64, (11, 3)).openreg()
        torch.exp(integers)
        torch.clamp(integers, max=0.5)
        torch.clamp(x, math.nan, 1.0)
        torch.clamp(x, max=math.nan)
        torch.openreg.synchronize()
        assert counting.calls == ["exp", "clamp", "clamp", "clamp"]
    finally:
        counting.library._destroy()


def test_gradients_through_the_functions_match_the_cpus():
    x = seeded_tensor(torch.float32, (16, 9))
    grad = seeded_tensor(torch.float32, (16, 9), 1)
    results = {}
    for device in ("cpu", "openreg"):
        leaf = x.to(device).detach().requires_grad_()
        y = (leaf.abs().log1p() + leaf.sin() * leaf.cos() - leaf.exp().rsqrt() + leaf.clamp(-0.5, 0.5).expm1()
             + (leaf.abs() + 1).reciprocal().sqrt().log() + leaf.neg().sgn() * leaf.sign())
        y.backward(grad.to(device))
        results[device] = (y.detach(), leaf.grad)
    for device_result, cpu_result in zip(results["openreg"], results["cpu"]):
        assert_same(device_result, cpu_result, rtol=0, atol=0)


def test_l1_loss_and_gradient_clipping_match_the_cpu():
    # L1's gradient is sgn; clip_grad_norm_ clamps the clipping coefficient and divides by the norm.
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    x, target = torch.randn(32, 8), torch.randn(32, 4)
    states = {}
    for device in ("cpu", "openreg"):
        moved = torch.nn.Linear(8, 4).to(device)
        moved.load_state_dict(model.state_dict())
        loss = F.l1_loss(moved(x.to(device)), target.to(device))
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(moved.parameters(), 0.1)
        states[device] = [loss.detach(), norm] + [p.grad for p in moved.parameters()]
    for device_result, cpu_result in zip(states["openreg"], states["cpu"]):
        assert_same(device_result, cpu_result, rtol=0, atol=0)


def test_views_and_in_place_on_views():
    a = seeded_tensor(torch.float32, (6, 8))
    da = a.openreg()
    assert_same(torch.exp(da[::2, 1::3]), torch.exp(a[::2, 1::3]), rtol=0, atol=0)
    assert_same(torch.abs(da.t()), torch.abs(a.t()), rtol=0, atol=0)
    da[1:4].neg_()
    a[1:4].neg_()
    da[:, ::2].clamp_(max=0.2)
    a[:, ::2].clamp_(max=0.2)
    assert_same(da, a, rtol=0, atol=0)


def test_errors_and_the_device_stays_usable():
    x = torch.ones(2, 3, device="openreg")
    # Raised by the calling thread while it builds the iterator.
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        torch.exp(x, out=x[:, :1].expand(2, 3))
    # ATen's own errors, for the calls the fallback takes.
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor is not supported"):
        torch.neg(torch.ones(3, dtype=torch.bool, device="openreg"))
        torch.openreg.synchronize()
    with pytest.raises(RuntimeError, match="Unlike NumPy, torch.sign is not intended to support complex numbers"):
        torch.sign(torch.ones(3, dtype=torch.complex64, device="openreg"))
        torch.openreg.synchronize()
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        torch.clamp(x)
        torch.openreg.synchronize()
    # ATen converts each bound to double to test it for NaN; a complex bound with an imaginary part fails that
    # conversion. One without is a real bound.
    with pytest.raises(RuntimeError, match="value cannot be converted to type double without overflow"):
        torch.clamp(x, min=1j)
    assert_same(torch.clamp(x * 3, max=2 + 0j), torch.full((2, 3), 2.0), rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torch.ones(3, dtype=torch.int64, device="openreg").exp_()
        torch.openreg.synchronize()
    # A bound the loop converts, checked at the call.
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        torch.clamp(x, max=1e300)
    assert_same(torch.clamp(x * 3, max=2).neg(), torch.full((2, 3), -2.0), rtol=0, atol=0)
