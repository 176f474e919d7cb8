"""Tensors on openreg give the same results as on the CPU."""

import pytest
import torch
import torch.nn.functional as F

from openreg_testing import assert_same

DTYPES = [
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64,
    torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool,
]


def sample(dtype, shape=(3, 5)):
    generator = torch.Generator().manual_seed(0)
    if dtype == torch.bool:
        return torch.rand(shape, generator=generator) > 0.5
    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(shape, generator=generator).to(dtype)
    return torch.randint(0, 100, shape, generator=generator).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trip_cpu_openreg_openreg1(dtype):
    cpu = sample(dtype)
    on_device = cpu.to("openreg")
    on_other = on_device.to("openreg:1")
    assert on_device.device == torch.device("openreg:0")
    assert on_other.device == torch.device("openreg:1")
    assert on_other.dtype == dtype
    assert torch.equal(on_other.cpu(), cpu)
    assert torch.equal(on_other.to("openreg:0").cpu(), cpu)


def test_dtype_conversion_on_device_and_during_copy():
    cpu = sample(torch.float32)
    assert_same(cpu.openreg().to(torch.int32), cpu.to(torch.int32))
    assert_same(cpu.to("openreg", dtype=torch.float64), cpu.double())
    target = torch.empty(3, 5, dtype=torch.float64)
    target.copy_(cpu.openreg())
    torch.testing.assert_close(target, cpu.double())


def test_matmul_and_linear_algebra():
    a, b = torch.randn(17, 33), torch.randn(33, 9)
    assert_same(a.openreg() @ b.openreg(), a @ b)
    assert_same(torch.mm(a.openreg(), b.openreg()), torch.mm(a, b))
    batch_a, batch_b = torch.randn(4, 5, 6), torch.randn(4, 6, 3)
    assert_same(torch.bmm(batch_a.openreg(), batch_b.openreg()), torch.bmm(batch_a, batch_b))
    bias = torch.randn(9)
    assert_same(torch.addmm(bias.openreg(), a.openreg(), b.openreg()), torch.addmm(bias, a, b))


def test_conv2d_and_pooling():
    x, w, bias = torch.randn(2, 3, 16, 16), torch.randn(8, 3, 3, 3), torch.randn(8)
    assert_same(F.conv2d(x.openreg(), w.openreg(), bias.openreg(), padding=1), F.conv2d(x, w, bias, padding=1))
    assert_same(F.max_pool2d(x.openreg(), 2), F.max_pool2d(x, 2))
    assert_same(F.batch_norm(x.openreg(), None, None, training=True), F.batch_norm(x, None, None, training=True))


def test_softmax_and_activations():
    x = torch.randn(6, 10)
    for function in (F.softmax, F.log_softmax):
        assert_same(function(x.openreg(), dim=1), function(x, dim=1))
    for function in (F.relu, F.gelu, torch.tanh, torch.sigmoid, torch.exp):
        assert_same(function(x.openreg()), function(x))


def test_reductions():
    x = torch.randn(4, 7, 3)
    assert_same(x.openreg().sum(), x.sum())
    assert_same(x.openreg().mean(dim=1), x.mean(dim=1))
    assert_same(x.openreg().std(dim=(0, 2)), x.std(dim=(0, 2)))
    values, indices = x.openreg().max(dim=2)
    assert_same(values, x.max(dim=2).values)
    assert_same(indices, x.max(dim=2).indices)
    assert_same(x.openreg().argmin(), x.argmin())
    assert_same(x.openreg().prod(dim=0), x.prod(dim=0))
    assert x.openreg().sum().item() == pytest.approx(x.sum().item(), rel=1e-5)


def test_indexing_and_advanced_indexing():
    x = torch.arange(60.0).reshape(3, 4, 5)
    d = x.openreg()
    assert_same(d[1], x[1])
    assert_same(d[:, 1:3, ::2], x[:, 1:3, ::2])
    assert_same(d[..., -1], x[..., -1])
    index = torch.tensor([2, 0, 2])
    assert_same(d[index.openreg()], x[index])
    assert_same(d[index], x[index])  # CPU indices work as on CUDA
    mask = x > 30
    assert_same(d[mask.openreg()], x[mask])
    assert_same(d[:, [0, 3], 1], x[:, [0, 3], 1])
    assert_same(torch.gather(d, 2, torch.zeros(3, 4, 1, dtype=torch.long).openreg()),
                torch.gather(x, 2, torch.zeros(3, 4, 1, dtype=torch.long)))


def test_index_put_and_masked_fill():
    x, d = torch.zeros(5, 5), torch.zeros(5, 5, device="openreg")
    rows = torch.tensor([0, 2, 4])
    x[rows, rows] = 7.0
    d[rows.openreg(), rows.openreg()] = 7.0
    assert_same(d, x)
    x.masked_fill_(x == 0, -1.0)
    d.masked_fill_(d == 0, -1.0)
    assert_same(d, x)
    x[1:3] = torch.ones(2, 5)
    d[1:3] = torch.ones(2, 5).openreg()
    assert_same(d, x)


def test_in_place_ops_keep_identity():
    x = torch.randn(4, 4)
    d = x.openreg()
    result = d.add_(1.5)
    assert result is d
    d.mul_(2).clamp_(min=0).sub_(torch.ones(4, 4, device="openreg"))
    x.add_(1.5).mul_(2).clamp_(min=0).sub_(torch.ones(4, 4))
    assert_same(d, x)


def test_views_share_storage():
    d = torch.zeros(4, 6, device="openreg")
    view = d.view(6, 4)
    transposed = d.t()
    row = d[2]
    assert view.untyped_storage().data_ptr() == d.untyped_storage().data_ptr()
    row.fill_(3.0)
    transposed[0, 1] = 9.0
    view.view(-1)[-1] = 5.0
    expected = torch.zeros(4, 6)
    expected[2] = 3.0
    expected[1, 0] = 9.0
    expected.view(-1)[-1] = 5.0
    assert_same(d, expected)
    assert_same(d.reshape(2, 12), expected.reshape(2, 12))
    assert_same(d.unsqueeze(0).expand(3, 4, 6), expected.unsqueeze(0).expand(3, 4, 6))


def test_out_variants():
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    out = torch.empty(3, 4, device="openreg")
    returned = torch.add(a.openreg(), b.openreg(), out=out)
    assert returned is out
    assert_same(out, a + b)
    # A wrongly sized out= tensor is resized, as on the CPU.
    small = torch.empty(0, device="openreg")
    torch.mul(a.openreg(), b.openreg(), out=small)
    assert small.shape == (3, 4)
    assert_same(small, a * b)
    mm_out = torch.empty(3, 3, device="openreg")
    torch.mm(a.openreg(), b.t().openreg(), out=mm_out)
    assert_same(mm_out, a @ b.t())


def test_non_contiguous_inputs():
    x = torch.randn(6, 8)
    d = x.openreg()
    assert not d.t().is_contiguous()
    assert_same(d.t() @ d, x.t() @ x)
    assert_same(d[::2, 1::3] * 3, x[::2, 1::3] * 3)
    assert_same(d.t().contiguous(), x.t().contiguous())
    assert torch.equal(d.t().cpu(), x.t())
    strided_target = torch.zeros(8, 6, device="openreg").t()
    strided_target.copy_(x)
    assert_same(strided_target, x)


def test_concatenation_comparison_and_where():
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert_same(torch.cat([a.openreg(), b.openreg()], dim=1), torch.cat([a, b], dim=1))
    assert_same(torch.stack([a.openreg(), b.openreg()]), torch.stack([a, b]))
    assert_same(a.openreg() > b.openreg(), a > b)
    assert_same(torch.where(a.openreg() > 0, a.openreg(), b.openreg()), torch.where(a > 0, a, b))


def test_data_dependent_shapes():
    x = torch.tensor([0.0, 1.0, 0.0, 2.0, 3.0])
    assert_same(x.openreg().nonzero(), x.nonzero())
    assert_same(torch.unique(torch.tensor([3, 1, 3, 2]).openreg()), torch.tensor([1, 2, 3]))


def test_factories_on_device():
    assert_same(torch.zeros(2, 3, device="openreg"), torch.zeros(2, 3))
    assert_same(torch.full((2,), 4.5, device="openreg"), torch.full((2,), 4.5))
    assert_same(torch.arange(10, device="openreg"), torch.arange(10))
    assert_same(torch.eye(3, device="openreg:1"), torch.eye(3))
    assert torch.eye(3, device="openreg:1").device == torch.device("openreg:1")


def test_cross_device_copy():
    x = torch.randn(5, 5)
    on_zero = x.to("openreg:0")
    on_one = torch.empty(5, 5, device="openreg:1")
    on_one.copy_(on_zero)
    assert_same(on_one, x)
    assert on_one.device.index == 1


def test_copy_broadcasts_the_source_as_on_cpu():
    row = torch.arange(3.0)
    for source in (row, row.to("openreg"), row.to("openreg:1")):
        for target_device in ("openreg", "cpu"):
            if source.device.type == "cpu" and target_device == "cpu":
                continue
            target = torch.zeros(2, 3, device=target_device)
            target.copy_(source)
            torch.testing.assert_close(target.cpu(), row.expand(2, 3))
    with pytest.raises(RuntimeError, match=r"broadcasts to the destination's shape \[2, 3\], got one of shape \[2\]"):
        torch.zeros(2, 3, device="openreg").copy_(torch.ones(2))
    with pytest.raises(RuntimeError, match=r"broadcasts to the destination's shape \[3\], got one of shape \[2, 3\]"):
        torch.zeros(3).copy_(torch.ones(2, 3, device="openreg"))


def test_mixing_devices_is_an_error():
    with pytest.raises(RuntimeError, match="same device"):
        torch.ones(3, device="openreg:0") + torch.ones(3, device="openreg:1")
    with pytest.raises(RuntimeError, match="same device"):
        torch.ones(3, device="openreg") + torch.ones(3)
    # A CPU scalar tensor takes part, as on CUDA.
    assert_same(torch.ones(3, device="openreg") + torch.tensor(2.0), torch.full((3,), 3.0))


def test_kernel_errors_name_the_op_at_the_next_synchronization_and_the_device_stays_usable():
    # The kernel fails on the device; the error surfaces at the next
    # synchronization (at once on a synchronous driver) as a RuntimeError
    # naming the op and carrying the kernel's message.
    with pytest.raises(RuntimeError, match=r"aten::index\S* failed on openreg:0: index 5 is out of bounds"):
        torch.arange(3, device="openreg")[torch.tensor([5]).openreg()]
        torch.openreg.synchronize()
    # Shape errors are found before anything is enqueued.
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.ones(2, 3, device="openreg") @ torch.ones(2, 3, device="openreg")
    assert torch.ones(2, device="openreg").sum().item() == 2.0
    torch.openreg.synchronize()  # the failure was reported once


def test_scalars():
    d = torch.tensor([2.5], device="openreg")
    assert d.item() == 2.5
    assert float(d) == 2.5
    assert torch.tensor(7, device="openreg").item() == 7
    assert bool(torch.tensor(True, device="openreg"))
    assert d.tolist() == [2.5]
