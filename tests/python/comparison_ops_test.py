"""eq, ne, lt, le, gt and ge on openreg (core/aten/comparison_ops.cc): with a tensor or a number, functional,
in-place and out=, the TensorIterator path and the CPU fallback it hands other calls to give the CPU's results,
dtypes and errors; the loops take exactly the calls whose operands share a dtype."""

import functools
import math

import pytest
import torch
import torch.nn.functional as F

from openreg_testing import CountingMeta, assert_same, same_result_or_error, seeded_tensor

aten = torch.ops.aten

OPS = ["eq", "ne", "lt", "le", "gt", "ge"]
DTYPES = [torch.float32, torch.float64, torch.complex64, torch.int64, torch.int32, torch.uint8, torch.bool,
          torch.float16, torch.bfloat16]
# Numbers of every category, some out of an operand dtype's range, which ATen converts without a check.
NUMBERS = [0, 1, -1, 300, 2 ** 40, 0.5, -2.25, 1e300, math.inf, math.nan, True, False, 1j, 1 + 0j]

same_bits_or_error = functools.partial(same_result_or_error, tolerances=lambda dtype: {"rtol": 0, "atol": 0})


def forms(name):
    """The op's functional call, out= calls writing bool and the operands' dtype, and its in-place call, each
    taking (self, other)."""
    functional = getattr(torch, name)

    def out(dtype):
        def call(self, other):
            result = torch.empty(0, dtype=dtype or self.dtype, device=self.device)
            assert functional(self, other, out=result) is result
            return result
        return call

    def in_place(self, other):
        result = getattr(self, name + "_")(other)
        assert result is self
        return self
    return [functional, out(torch.bool), out(None), in_place]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", OPS)
def test_with_a_tensor_every_form_gives_the_cpus_result(name, dtype):
    self, same_shape = seeded_tensor(dtype, (5, 3)), seeded_tensor(dtype, (5, 3), 1)
    # Equal elements where the dtype makes them likely apart from integers.
    same_shape[::2] = self[::2]
    for call in forms(name):
        same_bits_or_error(call, self.clone(), same_shape)
        # Broadcasting the other operand; a transposed self.
        same_bits_or_error(call, self.clone(), seeded_tensor(dtype, (1, 3), 2))
        same_bits_or_error(call, self.t().clone().t(), same_shape)
        # A CPU scalar tensor of the same dtype, and one of another (the fallback's).
        same_bits_or_error(call, self.clone(), seeded_tensor(dtype, (), 3))
        same_bits_or_error(call, self.clone(), torch.tensor(0.5, dtype=torch.float64))
        # Another dtype: the CPU converts, openreg's fallback with it.
        same_bits_or_error(call, self.clone(), seeded_tensor(torch.float32, (5, 3), 4))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", OPS)
def test_with_a_number_every_form_gives_the_cpus_result(name, dtype):
    self = seeded_tensor(dtype, (4, 3), integers=(-2, 3))
    if dtype.is_floating_point:
        self[0] = torch.tensor([0.5, math.inf, math.nan])
    for call in forms(name):
        for number in NUMBERS:
            same_bits_or_error(call, self.clone(), number)


def test_the_loops_take_their_calls_and_leave_the_rest_to_the_fallback():
    counting = CountingMeta()
    # The fallback sizes its results with the op's Meta kernel; the loops never ask it.
    for overload in ("Tensor", "Scalar"):
        counting.replace(f"eq.{overload}", lambda self, other: torch.empty_like(self, dtype=torch.bool))
        counting.replace(f"eq.{overload}_out", lambda self, other, *, out: out.resize_(self.shape))
    counting.replace("lt.Tensor", lambda self, other: torch.empty_like(self, dtype=torch.bool))
    try:
        # A shape no other test uses, so no cached meta result hides a call.
        x = seeded_tensor(torch.float32, (17, 2)).openreg()
        labels = seeded_tensor(torch.int64, (17, 2)).openreg()
        x == x
        x == 0.5
        labels == -100
        x.eq(torch.tensor(0.0))
        torch.eq(x, 1, out=torch.empty(0, dtype=torch.bool, device="openreg"))
        torch.eq(x, x, out=torch.empty(0, device="openreg"))
        torch.openreg.synchronize()
        assert counting.calls == []
        # A float number against integers promotes; two dtypes need a conversion; complex has no order.
        labels == 0.5
        x == x.double()
        with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
            z = x.to(torch.complex64)
            z < z
            torch.openreg.synchronize()
        assert counting.calls == ["eq.Scalar", "eq.Tensor", "lt.Tensor"]
    finally:
        counting.library._destroy()


def test_masks_of_a_training_step_match_the_cpu():
    # Label smoothing with ignored targets compares the targets with ignore_index and masks the loss.
    torch.manual_seed(0)
    logits, targets = torch.randn(32, 10), torch.randint(0, 10, (32,))
    targets[::5] = -100
    results = {}
    for device in ("cpu", "openreg"):
        leaf = logits.to(device).detach().requires_grad_()
        loss = F.cross_entropy(leaf, targets.to(device), label_smoothing=0.1, ignore_index=-100)
        padded = (leaf > 0).sum() + (leaf <= -1).sum()
        loss.backward()
        results[device] = (loss.detach(), padded, leaf.grad)
    for device_result, cpu_result in zip(results["openreg"], results["cpu"]):
        assert_same(device_result, cpu_result, rtol=0, atol=0)


def test_errors_at_the_call_and_the_device_stays_usable():
    x = torch.ones(2, 3, device="openreg")
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.ones(1, 3, device="openreg").eq_(x)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        torch.lt(x, 2, out=torch.empty(1, dtype=torch.bool, device="openreg").expand(2, 3))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x == torch.ones(2, 3)
    assert_same(x.ge(1), torch.ones(2, 3, dtype=torch.bool), rtol=0, atol=0)
