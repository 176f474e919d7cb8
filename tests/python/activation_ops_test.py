"""sigmoid, tanh, silu, gelu, leaky_relu, elu and softplus and their backward ops on openreg
(core/aten/activation_ops.cc): the TensorIterator path and the CPU fallback it hands other calls to give the
CPU's bits, dtypes and errors in every form (functional, in-place, out=), GELU's oneDNN calls stay the CPU's,
and autograd through them matches the CPU's."""

import functools

import pytest
import torch
import torch.nn.functional as F

from openreg_testing import CountingMeta, assert_same, same_result_or_error, seeded_tensor

aten = torch.ops.aten

# Dtypes the loops run, and ones they leave to the fallback (integers, which sigmoid and tanh promote to float;
# complex GELU, which ATen refuses; half and bfloat16).
DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128, torch.int64, torch.bool,
          torch.float16, torch.bfloat16]


def exact(dtype):
    """The loops are the CPU's own, so their bits are the CPU's."""
    return {"rtol": 0, "atol": 0}


same_bits_or_error = functools.partial(same_result_or_error, tolerances=exact)


# name -> (functional, in-place overload or None, out= overload, numbers), each taking (self, **numbers).
FORWARD = {
    "sigmoid": (torch.sigmoid, aten.sigmoid_, aten.sigmoid.out, {}),
    "tanh": (torch.tanh, aten.tanh_, aten.tanh.out, {}),
    "silu": (F.silu, aten.silu_, aten.silu.out, {}),
    "gelu": (aten.gelu, aten.gelu_, aten.gelu.out, {}),
    "gelu tanh": (aten.gelu, aten.gelu_, aten.gelu.out, {"approximate": "tanh"}),
    "leaky_relu": (aten.leaky_relu, aten.leaky_relu_, aten.leaky_relu.out, {"negative_slope": 0.2}),
    "elu": (aten.elu, aten.elu_, aten.elu.out, {"alpha": 1.5, "scale": 1.1, "input_scale": 0.9}),
    "softplus": (aten.softplus, None, aten.softplus.out, {"beta": 2, "threshold": 1.5}),
}
# name -> (functional, grad_input= overload, numbers); each takes (grad_output, saved, *numbers).
BACKWARD = {
    "sigmoid_backward": (aten.sigmoid_backward, aten.sigmoid_backward.grad_input, ()),
    "tanh_backward": (aten.tanh_backward, aten.tanh_backward.grad_input, ()),
    "silu_backward": (aten.silu_backward, aten.silu_backward.grad_input, ()),
    "gelu_backward": (aten.gelu_backward, aten.gelu_backward.grad_input, ()),
    "gelu_backward tanh": (functools.partial(aten.gelu_backward, approximate="tanh"),
                           functools.partial(aten.gelu_backward.grad_input, approximate="tanh"), ()),
    "leaky_relu_backward": (aten.leaky_relu_backward, aten.leaky_relu_backward.grad_input, (0.2, False)),
    "leaky_relu_backward of an in-place forward": (aten.leaky_relu_backward, aten.leaky_relu_backward.grad_input,
                                                   (0.2, True)),
    # elu_backward takes its numbers between grad_output and the saved tensor.
    "elu_backward": (lambda g, s, *n, **o: aten.elu_backward(g, 1.5, 1.1, 0.9, False, s, **o),
                     lambda g, s, *n, **o: aten.elu_backward.grad_input(g, 1.5, 1.1, 0.9, False, s, **o), ()),
    "softplus_backward": (aten.softplus_backward, aten.softplus_backward.grad_input, (2, 1.5)),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", FORWARD)
def test_every_forward_form_gives_the_cpus_bits(name, dtype):
    function, in_place, out_overload, numbers = FORWARD[name]
    # Contiguous (GELU's oneDNN calls, on the fallback) and transposed (GELU's own loop).
    for x in (seeded_tensor(dtype, (6, 5)), seeded_tensor(dtype, (5, 6), 1).t()):
        same_bits_or_error(function, x, **numbers)
        same_bits_or_error(lambda t: out_overload(t, **numbers, out=torch.empty(0, dtype=t.dtype, device=t.device)),
                           x)
        if in_place is None:
            continue

        def in_place_call(t):
            result = in_place(t, **numbers)
            assert result is t
            return t
        same_bits_or_error(in_place_call, x.clone())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BACKWARD)
def test_every_backward_form_gives_the_cpus_bits_with_broadcasting(name, dtype):
    function, out_overload, numbers = BACKWARD[name]
    grad_output, saved = seeded_tensor(dtype, (4, 1, 3)), seeded_tensor(dtype, (5, 3), 1)
    same_bits_or_error(function, grad_output, saved, *numbers)
    same_bits_or_error(lambda g, s: out_overload(g, s, *numbers, grad_input=torch.empty(0, dtype=g.dtype,
                                                                                      device=g.device)),
                       grad_output, saved)
    # Same shapes, contiguous: GELU's backward then goes to oneDNN on the CPU, so to the fallback here.
    same_bits_or_error(function, seeded_tensor(dtype, (5, 3), 2), saved, *numbers)


def test_gelu_takes_the_loop_exactly_where_the_cpu_runs_its_own():
    counting = CountingMeta()
    # The fallback sizes its results with the op's Meta kernel; the loop never asks it.
    counting.replace("gelu", lambda t, approximate="none": torch.empty_like(t))
    counting.replace("gelu_backward", lambda g, t, approximate="none": torch.empty_like(t))
    counting.replace("sigmoid", lambda t: torch.empty_like(t, dtype=torch.float32))
    try:
        # Shapes no other test uses, so no cached meta result hides a call.
        x, g = seeded_tensor(torch.float32, (11, 7)).openreg(), seeded_tensor(torch.float32, (11, 7), 1).openreg()
        F.gelu(x, approximate="tanh")
        F.gelu(x.t())
        F.gelu(x.double())
        aten.gelu_backward(g, x, approximate="tanh")
        aten.gelu_backward(g.t(), x.t())
        torch.sigmoid(x)
        torch.tanh(x)
        F.silu(x)
        F.leaky_relu(x, 0.2)
        F.elu(x)
        F.softplus(x)
        torch.openreg.synchronize()
        assert counting.calls == []
        # The exact form of a contiguous float tensor is oneDNN's on the CPU: the fallback's.
        F.gelu(x)
        aten.gelu_backward(g, x)
        # An integer sigmoid promotes to float: a conversion, the fallback's.
        torch.sigmoid(seeded_tensor(torch.int64, (11, 7)).openreg())
        torch.openreg.synchronize()
        assert counting.calls == ["gelu", "gelu_backward", "sigmoid"]
        # With oneDNN off the CPU runs its own loop, and so does openreg (another shape: the fallback keeps
        # the meta results of shapes it has seen).
        y, h = seeded_tensor(torch.float32, (13, 5)).openreg(), seeded_tensor(torch.float32, (13, 5), 1).openreg()
        with torch.backends.mkldnn.flags(enabled=False):
            F.gelu(y)
            aten.gelu_backward(h, y)
        torch.openreg.synchronize()
        assert counting.calls == ["gelu", "gelu_backward", "sigmoid"]
    finally:
        counting.library._destroy()


@pytest.mark.parametrize("onednn", [True, False], ids=["onednn on", "onednn off"])
def test_gelu_gives_the_cpus_bits_whichever_kernel_the_cpu_picks(onednn):
    # oneDNN's exact GELU and ATen's loop differ in the last bits of most elements, so a call that took the
    # other kernel than the CPU's fails here.
    x, g = seeded_tensor(torch.float32, (64, 64)), seeded_tensor(torch.float32, (64, 64), 1)
    with torch.backends.mkldnn.flags(enabled=onednn):
        assert_same(F.gelu(x.openreg()), F.gelu(x), rtol=0, atol=0)
        assert_same(aten.gelu_backward(g.openreg(), x.openreg()), aten.gelu_backward(g, x), rtol=0, atol=0)


@pytest.mark.parametrize("module", [torch.nn.Sigmoid(), torch.nn.Tanh(), torch.nn.SiLU(), torch.nn.GELU(),
                                    torch.nn.GELU(approximate="tanh"), torch.nn.LeakyReLU(0.2),
                                    torch.nn.LeakyReLU(0.2, inplace=True), torch.nn.ELU(0.7),
                                    torch.nn.ELU(0.7, inplace=True), torch.nn.Softplus(2, 1.5)], ids=repr)
def test_autograd_through_each_activation_gives_the_cpus_gradients(module):
    x = seeded_tensor(torch.float32, (16, 9))
    grad = seeded_tensor(torch.float32, (16, 9), 1)
    results = {}
    for device in ("cpu", "openreg"):
        leaf = x.to(device).detach().requires_grad_()
        # A linear layer first, so the activation's input is a non-leaf whose gradient flows on.
        y = module(leaf * 1.5)
        y.backward(grad.to(device))
        results[device] = (y.detach(), leaf.grad)
    for device_result, cpu_result in zip(results["openreg"], results["cpu"]):
        assert_same(device_result, cpu_result, rtol=0, atol=0)


def test_views_and_in_place_on_views():
    a = seeded_tensor(torch.float32, (6, 8))
    da = a.openreg()
    assert_same(torch.sigmoid(da[::2, 1::3]), torch.sigmoid(a[::2, 1::3]), rtol=0, atol=0)
    assert_same(F.silu(da.t()), F.silu(a.t()), rtol=0, atol=0)
    da[1:4].tanh_()
    a[1:4].tanh_()
    aten.gelu_(da[:, ::2], approximate="tanh")
    aten.gelu_(a[:, ::2], approximate="tanh")
    assert_same(da, a, rtol=0, atol=0)


def test_errors_and_the_device_stays_usable():
    x = torch.ones(2, 3, device="openreg")
    # Raised by the calling thread while it builds the iterator.
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        torch.sigmoid(x, out=x[:, :1].expand(2, 3))
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(4\) must match the size of tensor b \(3\)"):
        aten.tanh_backward(torch.ones(4, device="openreg"), x)
    # ATen's own errors for the calls the fallback takes.
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(x, approximate="erf")
        torch.openreg.synchronize()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torch.ones(3, dtype=torch.int64, device="openreg").sigmoid_()
        torch.openreg.synchronize()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        aten.silu_backward(x, x, grad_input=torch.empty(2, 3, dtype=torch.int64, device="openreg"))
        torch.openreg.synchronize()
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
        F.gelu(torch.ones(3, dtype=torch.complex64, device="openreg").t())
        torch.openreg.synchronize()
    # The numbers a loop converts, checked at the call.
    for call in (lambda: F.leaky_relu(x, 1e300), lambda: F.elu(x, alpha=1e300), lambda: F.softplus(x, 1, 1e300)):
        with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
            call()
    with pytest.raises(RuntimeError, match="In-place leakyReLu backward calculation is triggered with a negative slope"):
        aten.leaky_relu_backward(x, x, -0.1, True)
        torch.openreg.synchronize()
    with pytest.raises(RuntimeError, match="In-place elu backward calculation is triggered with a negative slope"):
        aten.elu_backward(x, -1.0, 1, 1, True, x)
        torch.openreg.synchronize()
    assert_same(torch.sigmoid(x - 1) * 2, torch.ones(2, 3))
