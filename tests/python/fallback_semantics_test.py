"""The CPU-kernel fallback keeps the semantics ATen's kernels read off their arguments.

Each test is a case the OpInfo database (op_coverage/) found broken: argument
identity, lazy conjugate/negative bits, views made by the fallback, and out=
kernels that use their output as scratch space.
"""

import os
import warnings

import pytest
import torch
import torch.nn.functional as F

from openreg_testing import assert_same


def test_in_place_op_that_would_broadcast_self_raises_as_on_cpu():
    # logical_and_ runs logical_and.out with out=self: the kernel must see out
    # and self as one tensor, or it resizes self instead of raising.
    small, large = torch.ones(5, dtype=torch.bool), torch.ones(3, 5, dtype=torch.bool)
    device_small = small.to("openreg")
    try:
        device_small.logical_and_(large.to("openreg"))
        torch.openreg.synchronize()
    except RuntimeError as error:
        assert "doesn't match the broadcast shape" in str(error)
    else:
        raise AssertionError("logical_and_ broadcast self on openreg; the CPU raises")
    assert device_small.shape == (5,)


@pytest.mark.parametrize("self_shape", [(1,), (), (5, 10)])
def test_addbmm_in_place_resizes_a_broadcast_self_as_on_cpu(self_shape):
    # The CPU's addbmm_ grows a self that broadcasts to the product's shape;
    # the kernel runs before the call returns, so the caller sees the new shape.
    self_, first, second = torch.randn(self_shape), torch.randn(2, 5, 3), torch.randn(2, 3, 10)
    expected = self_.clone().addbmm_(first, second, beta=0.5)
    on_device = self_.to("openreg")
    returned = on_device.addbmm_(first.to("openreg"), second.to("openreg"), beta=0.5)
    assert returned is on_device
    assert on_device.shape == (5, 10)
    torch.testing.assert_close(on_device.cpu(), expected)


def test_addbmm_in_place_with_a_self_that_does_not_broadcast_raises_as_on_cpu():
    first, second = torch.randn(2, 5, 3), torch.randn(2, 3, 10)
    with pytest.raises(RuntimeError, match="expand"):
        torch.randn(4).addbmm_(first, second)
    on_device = torch.randn(4).to("openreg")
    with pytest.raises(RuntimeError, match="expand"):
        on_device.addbmm_(first.to("openreg"), second.to("openreg"))
        torch.openreg.synchronize()
    assert on_device.shape == (4,)
    assert (on_device + 1).shape == (4,)


def test_copy_of_a_conjugated_tensor_materializes_the_conjugate():
    z = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64)
    on_device = z.to("openreg")
    assert_same(on_device.conj().clone(), z.conj())
    assert torch.equal(on_device.conj().cpu(), z.conj().resolve_conj())
    assert_same(torch.neg(on_device.conj()), torch.neg(z.conj()))
    target = torch.zeros(2, dtype=torch.complex64, device="openreg")
    target.copy_(on_device.conj())
    assert_same(target, z.conj())


def test_matmul_reads_the_conjugate_bit_of_its_arguments():
    a = torch.randn(3, 4, dtype=torch.complex64)
    b = torch.randn(4, 2, dtype=torch.complex64)
    assert_same(torch.mm(a.to("openreg").conj(), b.to("openreg")), torch.mm(a.conj(), b))


def test_polar_gradient_goes_through_conjugated_tensors():
    magnitude = torch.tensor([0.5, 2.0], requires_grad=True)
    angle = torch.tensor([0.3, -1.2], requires_grad=True)
    torch.polar(magnitude, angle).abs().sum().backward()
    device_magnitude = magnitude.detach().to("openreg").requires_grad_()
    device_angle = angle.detach().to("openreg").requires_grad_()
    torch.polar(device_magnitude, device_angle).abs().sum().backward()
    assert_same(device_magnitude.grad, magnitude.grad)
    assert_same(device_angle.grad, angle.grad)


def test_views_made_by_the_fallback_take_part_in_autograd():
    # view_as_complex has no openreg kernel: the fallback builds the view.
    pairs = torch.randn(3, 2, requires_grad=True)
    torch.view_as_complex(pairs).abs().sum().backward()
    device_pairs = pairs.detach().to("openreg").requires_grad_()
    view = torch.view_as_complex(device_pairs)
    assert not view.is_inference()
    view.abs().sum().backward()
    assert_same(device_pairs.grad, pairs.grad)


def test_reductions_whose_out_kernel_uses_the_output_as_scratch(capfd):
    # With a reduction, these out= kernels compute the elementwise loss in
    # `out` and reduce it there. The results must be the CPU's, and so must
    # the absence of warnings: mse_loss.out and its kin resize a scalar `out`
    # to the input's shape first, which warns (from the stream's thread on
    # threaded_sim, where it is a C++ warning on stderr).
    prediction = torch.rand(5, 5) * 0.8 + 0.1
    target = torch.rand(5, 5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for loss in (F.mse_loss, F.smooth_l1_loss, F.huber_loss, F.binary_cross_entropy):
            for reduction in ("mean", "sum", "none"):
                assert_same(
                    loss(prediction.to("openreg"), target.to("openreg"), reduction=reduction),
                    loss(prediction, target, reduction=reduction),
                )
    assert [str(warning.message) for warning in caught] == []
    assert "Warning" not in capfd.readouterr().err


def test_out_kernel_that_restrides_its_output():
    # max_unpool2d's out= kernel restrides its output to the input's memory
    # format (channels-last here); the caller holds the output in the meta
    # kernel's contiguous layout.
    values = torch.randn(1, 1, 3, 2).permute(0, 3, 1, 2)  # (1, 2, 1, 3)
    indices = torch.tensor([[[[0, 7, 13]], [[2, 9, 17]]]]).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    assert values.stride() == indices.stride() == (6, 1, 6, 2)
    expected = F.max_unpool2d(values, indices, 3, stride=2, output_size=(3, 6))
    result = F.max_unpool2d(values.to("openreg"), indices.to("openreg"), 3, stride=2, output_size=(3, 6))
    assert_same(result, expected)


def test_embedding_bag_modes_whose_bookkeeping_shapes_differ_from_the_meta_kernel():
    weight = torch.randn(10, 3)
    indices = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = torch.tensor([0, 3, 5])
    for mode in ("sum", "mean", "max"):
        assert_same(
            F.embedding_bag(indices.to("openreg"), weight.to("openreg"), offsets.to("openreg"), mode=mode),
            F.embedding_bag(indices, weight, offsets, mode=mode),
        )


def test_unreduced_multilabel_margin_loss_of_one_sample_is_a_scalar_as_on_cpu():
    # The meta kernel says [1]; the CPU kernel (the reference) returns a scalar (module_db found it).
    x, target = torch.randn(10), torch.tensor([0, 5, 8, 7, 6, 2, 7, 5, 0, 9])
    expected = F.multilabel_margin_loss(x, target, reduction="none")
    assert expected.shape == ()
    assert_same(F.multilabel_margin_loss(x.to("openreg"), target.to("openreg"), reduction="none"), expected)


def test_batch_norm_in_evaluation_mode_returns_the_cpu_kernel_shapes():
    x, mean, var = torch.randn(4, 3), torch.randn(3), torch.rand(3) + 0.5
    for batch_norm in (torch.native_batch_norm, torch.ops.aten._native_batch_norm_legit):
        expected = batch_norm(x, None, None, mean, var, False, 0.1, 1e-5)
        result = batch_norm(x.to("openreg"), None, None, mean.to("openreg"), var.to("openreg"), False, 0.1, 1e-5)
        for got, want in zip(result, expected):
            assert_same(got, want)


def test_ops_with_a_composite_for_other_devices_run_the_cpu_kernels_exactly():
    # ATen's composite kernels for other devices (layer and group norm, addr)
    # compute in another order; openreg must run the CPU kernels, forward and
    # backward, and match them bit for bit (module_db's Transformer gradients
    # found it). Bit for bit needs the CPU's team size, which threaded_sim
    # keeps only for deterministic algorithms (Note [OpenMP width of driver
    # threads]).
    torch.manual_seed(0)
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        _run_composite_cases_on_both_devices()
    finally:
        torch.use_deterministic_algorithms(previous)


def test_no_op_with_a_cpu_kernel_runs_an_implicit_composite_on_openreg():
    # An op with a CPU kernel and a CompositeImplicitAutograd kernel runs that composite on a device without a
    # kernel of its own: another computation than the CPU's, rounded differently (silu_backward's gradients were
    # a last bit off the CPU's in 1,932 of 4,096). Such ops get the CPU fallback or a loop of their own.
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    composites = sorted(name for name in torch._C._dispatch_get_all_op_names()
                        if name.startswith("aten::") and has(name, "CPU")
                        and has(name, "CompositeImplicitAutograd") and not has(name, "PrivateUse1"))
    assert composites == []


@pytest.mark.parametrize("op", [torch.ops.aten.silu_backward, torch.ops.aten.mish_backward], ids=str)
def test_activation_gradients_with_a_composite_for_other_devices_are_the_cpus_bits(op):
    generator = torch.Generator().manual_seed(0)
    grad, x = torch.randn(4096, generator=generator), torch.randn(4096, generator=generator)
    assert_same(op(grad.openreg(), x.openreg()), op(grad, x), atol=0, rtol=0)


def _run_composite_cases_on_both_devices():
    x = torch.randn(16, 3, 40) * 5 + 3
    cases = [
        (lambda t, w, b: F.layer_norm(t, (40,), w, b), torch.randn(40), torch.randn(40)),
        (lambda t, w, b: F.group_norm(t, 3, w, b), torch.randn(3), torch.randn(3)),
        (lambda t, u, v: torch.addr(t[0], u, v, beta=0.7, alpha=1.3).expand_as(t), torch.randn(3), torch.randn(40)),
    ]
    for norm, weight, bias in cases:
        cotangent = torch.randn_like(x)
        results = []
        for device in ("cpu", "openreg"):
            leaves = [v.to(device).requires_grad_() for v in (x, weight, bias)]
            out = norm(*leaves)
            results.append((out, *torch.autograd.grad(out, leaves, cotangent.to(device))))
        for got, want in zip(results[1], results[0]):
            assert_same(got, want, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("with_running_stats", [False, True], ids=["legit_no_stats", "native_batch_norm"])
def test_batch_norm_statistics_in_half_precision_have_the_cpu_kernel_dtype(dtype, with_running_stats):
    # The meta kernel gives the saved statistics in float, the CPU kernel in the input's dtype.
    x = torch.randn(4, 3).to(dtype)
    weight, bias = torch.ones(3, dtype=dtype), torch.zeros(3, dtype=dtype)

    def batch_norm(device):
        args = [t.to(device) for t in (x, weight, bias)]
        if with_running_stats:
            mean, var = torch.zeros(3, dtype=dtype, device=device), torch.ones(3, dtype=dtype, device=device)
            return torch.native_batch_norm(*args, mean, var, True, 0.1, 1e-5)
        return torch.ops.aten._native_batch_norm_legit(*args, True, 0.1, 1e-5)

    expected, result = batch_norm("cpu"), batch_norm("openreg")
    for got, want in zip(result, expected):
        assert got.dtype == want.dtype
        assert_same(got, want)


def test_out_kernel_that_flips_the_conjugate_bit_of_its_output():
    # linalg_lu_solve with left=False solves the conjugate-transposed system
    # and flips its output's conjugate bit instead of conjugating the values.
    torch.manual_seed(0)
    lu, pivots = torch.linalg.lu_factor(torch.randn(3, 3, dtype=torch.complex64))
    b = torch.randn(2, 3, dtype=torch.complex64)
    expected = torch.linalg.lu_solve(lu, pivots, b, left=False)
    on_device = [t.to("openreg") for t in (lu, pivots, b)]
    assert_same(torch.linalg.lu_solve(*on_device, left=False), expected)
    out = torch.empty(2, 3, dtype=torch.complex64, device="openreg")
    torch.linalg.lu_solve(*on_device, left=False, out=out)
    assert_same(out, expected)


def test_composite_out_variant_that_rejects_other_devices_runs_on_the_cpu():
    # mode.values has only a composite kernel, which accepts CPU, CUDA and XPU tensors.
    x = torch.tensor([[1.0, 2.0, 2.0], [3.0, 3.0, 1.0]])
    values = torch.empty(2, device="openreg")
    indices = torch.empty(2, dtype=torch.long, device="openreg")
    torch.mode(x.to("openreg"), 1, out=(values, indices))
    expected = torch.mode(x, 1)
    assert_same(values, expected.values)
    assert_same(indices, expected.indices)



@pytest.mark.skipif(os.environ["OPENREG_DRIVER"] == "cpu_sim", reason="cpu_sim runs every op before returning")
def test_training_batch_norm_and_masked_gradients_are_enqueued_without_waiting():
    # Batch norm in training mode and convolution_backward with a partial
    # output_mask (an input that needs no gradient) have meta shapes: they
    # must be queued behind earlier work, not drain the stream (each wait cost
    # a small ResNet about 30 stream drains per step).
    torch.manual_seed(0)
    x, weight = torch.randn(8, 3, 16, 16), torch.randn(4, 3, 3, 3)
    big = torch.randn(1024, 1024, device="openreg")

    def step(device):
        w = weight.to(device).requires_grad_()
        out = F.conv2d(x.to(device), w, padding=1)  # x needs no gradient
        normalized = F.batch_norm(out, None, None, training=True)
        (grad_weight,) = torch.autograd.grad(normalized.square().sum(), w)
        return normalized, grad_weight

    step("openreg")  # first calls import Python meta kernels
    torch.openreg.synchronize()
    stream = torch.openreg.current_stream()
    for _ in range(16):  # about a second of work, queued ahead of the step
        big @ big
    results = step("openreg")
    assert not stream.query(), "an op of the step waited for the stream to drain"
    for got, want in zip(results, step("cpu")):
        assert_same(got, want, rtol=1e-4, atol=1e-4)


def _convolution_layout_cases():
    channels_last, channels_last_3d = torch.channels_last, torch.channels_last_3d
    return {
        "contiguous": (F.conv2d, torch.randn(2, 4, 8, 8), torch.randn(6, 4, 3, 3), {}),
        "channels-last input": (F.conv2d, torch.randn(2, 4, 8, 8).to(memory_format=channels_last),
                                torch.randn(6, 4, 3, 3), {}),
        "channels-last weight": (F.conv2d, torch.randn(2, 4, 8, 8),
                                 torch.randn(6, 4, 3, 3).to(memory_format=channels_last), {}),
        "channels-last, float64": (F.conv2d, torch.randn(2, 4, 8, 8, dtype=torch.float64).to(memory_format=channels_last),
                                   torch.randn(6, 4, 3, 3, dtype=torch.float64), {}),
        "channels-last 3d": (F.conv3d, torch.randn(2, 3, 6, 8, 8).to(memory_format=channels_last_3d),
                             torch.randn(4, 3, 3, 3, 3), {}),
        "channels-last transposed": (F.conv_transpose2d, torch.randn(2, 8, 9, 9).to(memory_format=channels_last),
                                     torch.randn(8, 4, 3, 3), dict(stride=2)),
        "channels-last, groups": (F.conv2d, torch.randn(2, 8, 9, 9).to(memory_format=channels_last),
                                  torch.randn(8, 4, 3, 3), dict(groups=2)),
        "conv1d": (F.conv1d, torch.randn(2, 4, 9), torch.randn(6, 4, 3), {}),
    }


@pytest.mark.parametrize("case", list(_convolution_layout_cases()))
def test_convolution_results_have_the_cpu_kernel_memory_format(case):
    # The meta kernel answers contiguous for every convolution; ATen's CPU convolution keeps a channels-last input
    # or weight channels-last, as CUDA does.
    function, x, weight, options = _convolution_layout_cases()[case]
    leaves = {device: [t.detach().to(device).requires_grad_() for t in (x, weight)] for device in ("cpu", "openreg")}
    results = {device: function(*leaves[device], **options) for device in leaves}
    assert results["openreg"].stride() == results["cpu"].stride()
    assert_same(results["openreg"], results["cpu"], rtol=0, atol=0)
    for device, result in results.items():
        result.backward(torch.ones_like(result))
    for got, want in zip(leaves["openreg"], leaves["cpu"]):
        assert got.grad.stride() == want.grad.stride()
        assert_same(got.grad, want.grad, rtol=0, atol=0)


def test_convolution_argument_errors_are_the_cpu_kernel_errors():
    x, weight = torch.randn(2, 5, 8, 8), torch.randn(6, 4, 3, 3)
    with pytest.raises(RuntimeError, match="expected input\\[2, 5, 8, 8\\] to have 4 channels, but got 5 channels"):
        F.conv2d(x.to("openreg"), weight.to("openreg"))
    with pytest.raises(RuntimeError, match="non-positive stride is not supported"):
        F.conv2d(x[:, :4].to("openreg"), weight.to("openreg"), stride=0)
    assert_same(F.conv2d(x[:, :4].to("openreg"), weight.to("openreg")), F.conv2d(x[:, :4], weight), rtol=0, atol=0)
