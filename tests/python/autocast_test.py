"""torch.autocast("openreg") and torch.amp.GradScaler("openreg")."""

import pytest
import torch
import torch.nn.functional as F

LOW_PRECISION = [torch.bfloat16, torch.float16]


def randn(*shape):
    return torch.randn(*shape, device="openreg")


def test_default_autocast_dtype_and_supported_dtypes():
    assert torch.get_autocast_dtype("openreg") == torch.float16
    assert torch.openreg.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    with torch.autocast("openreg", dtype=torch.bfloat16):
        assert torch.get_autocast_dtype("openreg") == torch.bfloat16
        assert torch.is_autocast_enabled("openreg")
    assert not torch.is_autocast_enabled("openreg")


@pytest.mark.parametrize("dtype", LOW_PRECISION)
def test_matmul_linear_and_convolution_run_in_low_precision(dtype):
    a, b = randn(8, 8), randn(8, 8)
    linear = torch.nn.Linear(8, 4).to("openreg")
    conv = torch.nn.Conv2d(3, 4, 3).to("openreg")
    with torch.autocast("openreg", dtype=dtype):
        assert (a @ b).dtype == dtype
        assert torch.mm(a, b).dtype == dtype
        assert torch.bmm(a[None], b[None]).dtype == dtype
        assert linear(a).dtype == dtype
        out = conv(randn(1, 3, 6, 6))
        assert out.dtype == dtype
    expected = (a.cpu().to(dtype) @ b.cpu().to(dtype))
    with torch.autocast("openreg", dtype=dtype):
        torch.testing.assert_close((a @ b).cpu(), expected)


@pytest.mark.parametrize("dtype", LOW_PRECISION)
def test_softmax_norms_and_losses_run_in_float32(dtype):
    x = randn(4, 8).to(dtype)
    target = torch.randint(0, 8, (4,), device="openreg")
    layer_norm = torch.nn.LayerNorm(8).to("openreg")
    with torch.autocast("openreg", dtype=dtype):
        assert torch.softmax(x, dim=1).dtype == torch.float32
        assert F.log_softmax(x, dim=1).dtype == torch.float32
        assert layer_norm(x).dtype == torch.float32
        assert F.group_norm(x.view(4, 8, 1), 2).dtype == torch.float32
        assert F.mse_loss(x, x * 2).dtype == torch.float32
        assert F.nll_loss(F.log_softmax(x, dim=1), target).dtype == torch.float32
        assert F.cross_entropy(x, target).dtype == torch.float32
        assert x.exp().dtype == torch.float32
        assert x.sum().dtype == torch.float32


def test_elementwise_ops_keep_their_dtype_and_multi_input_ops_promote():
    x = randn(4)
    with torch.autocast("openreg", dtype=torch.bfloat16):
        assert (x + 1).dtype == torch.float32
        assert x.relu().dtype == torch.float32
        low = x.to(torch.bfloat16)
        assert torch.addcmul(x, low, low).dtype == torch.float32


def test_autocast_leaves_cpu_tensors_alone():
    with torch.autocast("openreg", dtype=torch.bfloat16):
        assert (torch.randn(2, 2) @ torch.randn(2, 2)).dtype == torch.float32


def test_binary_cross_entropy_is_refused_with_the_alternative():
    p = torch.rand(4, device="openreg")
    with torch.autocast("openreg", dtype=torch.float16):
        with pytest.raises(RuntimeError, match="binary_cross_entropy_with_logits"):
            F.binary_cross_entropy(p, p)
        assert F.binary_cross_entropy_with_logits(p, p).dtype == torch.float32


def test_unsupported_dtype_warns_and_disables_autocast():
    with pytest.warns(UserWarning, match="openreg"):
        with torch.autocast("openreg", dtype=torch.float64):
            assert not torch.is_autocast_enabled("openreg")
            assert (randn(2, 2) @ randn(2, 2)).dtype == torch.float32


def test_backward_through_autocast_gives_float32_gradients():
    linear = torch.nn.Linear(8, 8).to("openreg")
    with torch.autocast("openreg", dtype=torch.bfloat16):
        loss = linear(randn(4, 8)).float().pow(2).mean()
    loss.backward()
    assert linear.weight.grad.dtype == torch.float32


def test_grad_scaler_in_a_training_loop():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to("openreg")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("openreg", init_scale=2.0**10)
    x = randn(32, 8)
    y = x.sum(dim=1, keepdim=True)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        with torch.autocast("openreg", dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    assert scaler.get_scale() > 0
    assert losses[-1] < 0.5 * losses[0], losses


def test_grad_scaler_skips_steps_with_infinite_gradients():
    model = torch.nn.Linear(2, 1).to("openreg")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("openreg", init_scale=4.0)
    before = model.weight.detach().cpu().clone()
    optimizer.zero_grad()
    loss = model(torch.tensor([[float("inf"), 1.0]], device="openreg")).sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    assert torch.equal(model.weight.detach().cpu(), before)  # the step was skipped
    assert scaler.get_scale() == 2.0  # and the scale backed off
